# Verifier image for orharbor task $task_id (Harbor's separate verifier mode).
# The tests are baked in, owned by root and unreadable to other users; the
# agent's deliverable arrives as an artifact after the agent has finished.
FROM $base_image
$base_image_check
# PID 1 is Harbor's keepalive (sleep infinity), which ignores SIGTERM: stop it at once instead of
# after the engine's 10 s grace period.
STOPSIGNAL SIGKILL
$interpreter_record
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
# The interpreter solve.py is run with: only these packages are visible to it.
RUN python3 -m venv $solver_venv \
 && $solver_venv/bin/pip install --no-cache-dir $solver_packages
COPY . /tests
RUN chown -R root:root /tests && chmod -R go-rwx /tests && mkdir -p /app /logs/verifier
WORKDIR /tests
