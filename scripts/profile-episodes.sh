#!/bin/bash
# Episodes of two RL consumers on orharbor exports, each graded by the consumer's own code:
# tinker-cookbook 0.6.1's HarborReward on an `export --for tinker` task, and Prime's verifiers
# 0.4.0 (parse_task, HarborTask.finalize and .solved; in separate mode also its restore() and
# stage_verifier in a fresh verifier box) on `export --for prime` tasks in shared and separate
# mode, at levels 1 and 2 (oracle 1.0, naive 0.0, no answer -1.0), then Prime's rollout with a
# non-root runtime user (the collect hook must fail it) and Prime's refusal of the default export.
#
#   sudo bash scripts/profile-episodes.sh      (root: the bubblewrap sandbox; a few minutes)
#
# The consumers' packages go into throwaway folders under a temporary directory, never into .venv:
# verifiers 0.4.0 pins an mcp that Harbor 0.26's fastmcp refuses, so Harbor joins it --no-deps with
# what its models import; tinker-cookbook requires torch only for training code, so it is
# installed --no-deps with what its reward code imports, and a stand-in torch module
# (scripts/profile_episodes/torch_stub) lets that import succeed. Needs PyPI.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
HERE="$REPO/scripts/profile_episodes"
PY=$("$REPO/.venv/bin/python" -c "import sys; print(sys._base_executable)")
WORK=$(mktemp -d /tmp/orharbor-episodes.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True PIP_DISABLE_PIP_VERSION_CHECK=1

echo "== consumers' packages (in $WORK)"
"$PY" -m venv "$WORK/vf"
quiet() { grep -v "^WARNING: Location\|dependency conflicts\|requires .*, which is not installed\|resolver" || true; }
"$WORK/vf/bin/pip" install -q verifiers==0.4.0 2>&1 | quiet
"$WORK/vf/bin/pip" install -q --no-deps harbor==0.26.0 2>&1 | quiet
"$WORK/vf/bin/pip" install -q toml pathspec shortuuid platformdirs pyseccomp numpy==2.2.6 scipy==1.15.3 2>&1 | quiet
"$WORK/vf/bin/pip" install -q --no-deps --target "$WORK/tinker" tinker-cookbook==0.6.1 chz tinker distro orjson 2>&1 | quiet

echo "== exports"
"$REPO/.venv/bin/orharbor" export --out "$WORK/tinker-tasks" --problem jobshop --for tinker 2>&1 | grep -v exporting
"$REPO/.venv/bin/orharbor" export --out "$WORK/prime-tasks" --problem jobshop --for prime --verifier-mode shared \
    --image-prefix localhost/orharbor 2>&1 | grep -v exporting
"$REPO/.venv/bin/orharbor" export --out "$WORK/prime-separate" --problem jobshop --for prime \
    --image-prefix localhost/orharbor 2>&1 | grep -v exporting
"$REPO/.venv/bin/orharbor" export --out "$WORK/default-tasks" --problem jobshop 2>&1 | grep -v exporting

echo "== tinker-cookbook 0.6.1: HarborReward"
PYTHONPATH="$HERE:$HERE/torch_stub:$WORK/tinker" "$REPO/.venv/bin/python" "$HERE/tinker_episode.py" \
    "$WORK/tinker-tasks/jobshop-4x4-l1-s0" "$WORK/tinker-tasks/jobshop-4x4-l2-s0" 2>&1 | grep '^tinker '
echo "== verifiers 0.4.0: HarborTaskset's task"
PYTHONPATH="$REPO/src:$HERE" "$WORK/vf/bin/python" "$HERE/prime_episode.py" \
    "$WORK/prime-tasks/jobshop-4x4-l1-s0" "$WORK/prime-tasks/jobshop-4x4-l2-s0" 2>&1 | grep '^prime '
PYTHONPATH="$REPO/src:$HERE" "$WORK/vf/bin/python" "$HERE/prime_episode.py" \
    "$WORK/prime-separate/jobshop-4x4-l1-s0" "$WORK/prime-separate/jobshop-4x4-l2-s0" 2>&1 | grep '^prime '
PYTHONPATH="$REPO/src:$HERE" "$WORK/vf/bin/python" "$HERE/prime_episode.py" --runtime-user agent \
    "$WORK/prime-tasks/jobshop-4x4-l1-s0" 2>&1 | grep '^prime ' 
echo "== verifiers 0.4.0 on the default export (expected: refused)"
PYTHONPATH="$REPO/src:$HERE" "$WORK/vf/bin/python" "$HERE/prime_episode.py" \
    "$WORK/default-tasks/jobshop-4x4-l1-s0" 2>&1 | grep 'ValueError:' | sort -u || true
