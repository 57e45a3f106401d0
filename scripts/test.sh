#!/usr/bin/env bash
# The test command: set up (bubblewrap, .venv, the RL consumers' venvs), then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
ORHARBOR_EXTRAS=".[test]" bash scripts/setup.sh
# The RL trainers tests/test_consumers.py (OpenEnv, TRL) and tests/test_profile_consumers.py
# (Tinker, Prime verifiers) drive, each in its own pinned venv (.venv-consumers/NAME, about 1.2 GB
# each); rebuilt only when its pin list changed. The main job (scripts/run.sh) needs none of them.
bash scripts/consumers.sh openenv trl prime tinker
# One worker more than there are cores (pytest-xdist): the tests are independent, each in its own temporary
# folders, and a trial spends part of its time waiting (sandbox starts, a probe's time limit); with a worker per
# core the 2-core machine was 92% busy (17:30), with three 99% (15:44). ORHARBOR_TEST_WORKERS=N sets the number;
# 0 runs them in this process, one after another.
# Bytecode is written (src/ and tests/ __pycache__, ignored by git) even where the environment says not to:
# else every worker and every orharbor subprocess compiles the package and the assertion-rewritten tests again.
unset PYTHONDONTWRITEBYTECODE
exec .venv/bin/python -m pytest -n "${ORHARBOR_TEST_WORKERS:-$(($(nproc) + 1))}" "$@"
