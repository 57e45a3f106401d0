#!/usr/bin/env bash
# One isolated venv per RL trainer that consumes orharbor exports, for tests/test_consumers.py:
#   bash scripts/consumers.sh NAME...      (NAME: openenv, trl, prime, tinker)
# .venv-consumers/NAME gets exactly the versions pinned in scripts/consumers/NAME.txt (the trainer,
# Harbor 0.26 and orharbor's dependencies), installed with --no-deps, plus this checkout of orharbor
# (editable). Pinned because OpenEnv and Harbor 0.26 cannot be resolved together: openenv 0.10.0
# requires fastmcp>=3,<4 and harbor 0.26 requires fastmcp>=4.1.6 (used only by Harbor's MCP server,
# which no trial imports), so the openenv list keeps fastmcp 3. The trl list installs TRL without
# torch, transformers or accelerate: `trl.experimental.harbor` imports none of them.
# A venv whose pin list is unchanged since it was built is left as it is (orharbor is editable).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "consumers: run scripts/setup.sh first (.venv)" >&2; exit 1; }
base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
mkdir -p .venv-consumers
for name in "$@"; do
  pins=scripts/consumers/$name.txt
  [ -f "$pins" ] || { echo "consumers: no pin list $pins" >&2; exit 1; }
  # One build at a time per venv: the test workers (pytest-xdist) may ask for the same one at once.
  exec 9>".venv-consumers/$name.lock"
  flock 9
  venv=.venv-consumers/$name
  want=$(sha256sum "$pins" | cut -d" " -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins" 2>/dev/null)" = "$want" ]; then
    exec 9>&-
    continue
  fi
  echo "consumers: building $venv from $pins" >&2
  rm -rf "$venv"
  "$base" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --no-deps -r "$pins"
  "$venv/bin/python" -m pip install -q --no-deps -e .
  echo "$want" > "$venv/.pins"
  exec 9>&-
done
