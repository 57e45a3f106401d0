# Agent image for orharbor task $task_id. It holds the instance and nothing
# used for scoring: no reference, no verifier, no hidden instance.
FROM $base_image
$base_image_check
# PID 1 is Harbor's keepalive (sleep infinity), which ignores SIGTERM: stop it at once instead of
# after the engine's 10 s grace period.
STOPSIGNAL SIGKILL
$interpreter_record
ENV DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
# What Harbor's installed agents (claude-code, codex, ...) expect to find.
RUN apt-get update \
 && apt-get install -y --no-install-recommends $apt_packages \
 && rm -rf /var/lib/apt/lists/*
# The interpreter solve.py is scored with: only these packages are visible to it.
# It stays root-owned, so what the agent can import is what the verifier can.
RUN python3 -m venv $solver_venv \
 && $solver_venv/bin/pip install --no-cache-dir $solver_packages
ENV PATH=$solver_venv/bin:$$PATH
RUN useradd --create-home --shell /bin/bash $agent_user
WORKDIR /app
$copy_lines
RUN chown -R $agent_user:$agent_user /app
