# Verifier image for orharbor modelling task $task_id (Harbor's separate verifier mode).
# Grading reads answer files with the standard library; a RetailOpt task first runs the
# agent's model.py, under this image's python3 and the modelling stack installed below.
# The expected values are baked in, owned by root and unreadable to other users.
FROM $base_image
$base_image_check
# PID 1 is Harbor's keepalive (sleep infinity), which ignores SIGTERM: stop it at once instead of
# after the engine's 10 s grace period.
STOPSIGNAL SIGKILL
$interpreter_record
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
$install_lines
COPY . /tests
RUN chown -R root:root /tests && chmod -R go-rwx /tests && mkdir -p /app /logs/verifier
WORKDIR /tests
