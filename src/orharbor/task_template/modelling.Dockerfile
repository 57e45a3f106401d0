# Agent image for orharbor modelling task $task_id. It holds the problem's data
# files and the modelling stack, and nothing used for grading.
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
# The modelling stack, pinned, in the image's own python3.
RUN pip install --no-cache-dir $modelling_packages
RUN useradd --create-home --shell /bin/bash $agent_user
WORKDIR /app
$copy_lines
RUN chown -R $agent_user:$agent_user /app
