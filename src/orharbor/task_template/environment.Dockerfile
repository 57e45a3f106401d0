# Agent image for orharbor task $task_id. It holds the instance and nothing
# used for scoring: no reference, no verifier, no hidden instance.
FROM $base_image
$base_image_check
# PID 1 is Harbor's keepalive (sleep infinity), which ignores SIGTERM: stop it at once instead of
# after the engine's 10 s grace period.
STOPSIGNAL SIGKILL
# The interpreter the verifier runs with, as built: test.sh compares /usr/local with this record
# before Python starts (what python3 reads and imports there: the interpreter, libpython, the
# standard library with lib-dynload, and the names Python looks for beside them: pyvenv.cfg,
# ._pth, pythonXY.zip...; not site-packages nor __pycache__). Right after the base image check:
# they are the base image's, and no later step writes there (what pip adds goes to site-packages
# and venvs); one that did would make the verifier refuse, never pass. So this layer is the same in
# every task's image, built once.
RUN set -e; mkdir -p /usr/local/share/orharbor; cd /usr/local; v=$$(readlink bin/python3); \
    z=$$(echo "$$v" | tr -d .).zip; \
    { find . bin lib -mindepth 1 -maxdepth 1 \( -name pyvenv.cfg -o -name '*._pth' -o -name pybuilddir.txt \
      -o -name 'libpython*' -o -path bin/python3 -o -path "bin/$$v" -o -path bin/lib -o -path bin/lib64 \
      -o -path "lib/$$v" -o -path "lib/$$z" \) \( -type f -printf '%y %s %p\n' -o -printf '%y %p %l\n' \); \
    find "lib/$$v" -mindepth 1 \( -path "lib/$$v/site-packages" -o -path "lib/$$v/test" -o -path "lib/$$v/idlelib" -o -path "lib/$$v/tkinter" -o -path "lib/$$v/turtledemo" -o -path "lib/$$v/ensurepip" -o -path "lib/$$v/config-*" -o -name __pycache__ \) -prune \
      -o \( -type f -printf '%y %s %p\n' -o -printf '%y %p %l\n' \); } | LC_ALL=C sort > share/orharbor/interpreter.list; \
    sed -n 's/^f [0-9]* //p' share/orharbor/interpreter.list | xargs -r -d '\n' sha256sum -- > share/orharbor/interpreter.sha256; \
    sed -n 's/^f [0-9]* //p' share/orharbor/interpreter.list | xargs -r -d '\n' stat -c '%i %s %.9Y %.9Z %n' -- \
      | LC_ALL=C sort > share/orharbor/interpreter.keys; \
    chmod 644 share/orharbor/interpreter.list share/orharbor/interpreter.sha256 share/orharbor/interpreter.keys; \
    test -s share/orharbor/interpreter.sha256
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
