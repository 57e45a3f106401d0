# Verifier image for orharbor modelling task $task_id (Harbor's separate verifier mode).
# Grading reads the answer files with the standard library only; the expected
# values are baked in, owned by root and unreadable to other users.
FROM $base_image
ENV PYTHONDONTWRITEBYTECODE=1
COPY . /tests
RUN chown -R root:root /tests && chmod -R go-rwx /tests && mkdir -p /app /logs/verifier
WORKDIR /tests
