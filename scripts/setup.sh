#!/usr/bin/env bash
# Set up a fresh machine for orharbor: bubblewrap and slirp4netns (for `orharbor check`), a
# Python >= 3.12 virtual environment in .venv with orharbor (and its test extra with
# ORHARBOR_EXTRAS=".[test]", as scripts/test.sh sets it), and the Debian packages the task images
# install (the sandbox shows them from this machine's files).
set -euo pipefail
cd "$(dirname "$0")/.."

# bubblewrap: the sandbox; slirp4netns: its user-mode network (the host's loopback out of reach)
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v slirp4netns >/dev/null 2>&1 || missing="$missing slirp4netns"
if [ -n "$missing" ]; then
  echo "setup: installing$missing" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq $missing >/dev/null
fi

pick_python() {
  for candidate in "${PYTHON:-}" python3 python3.13 python3.12; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "setup: orharbor's tests need Python >= 3.12 (Harbor does); set PYTHON=/path/to/python3.12" >&2
  return 1
}

if [ ! -x .venv/bin/python ]; then
  PY=$(pick_python)
  echo "setup: creating .venv with $("$PY" --version)" >&2
  "$PY" -m venv .venv
fi
# What the commands need; the test command adds the test extra (pytest, the docs site, build).
# uv installs them, byte-compiling on every core (pip compiles the 770 MB in one process: most of
# the main job's set-up). The bytecode is needed: the sandbox shows these packages read-only, so an
# agent's `import ortools` would compile them again at every run. uv reads no pip.conf: where only
# pip's configured index or wheel folder reaches the packages, pip does it.
if ! { .venv/bin/python -m pip install -q uv \
       && .venv/bin/python -m uv pip install -q --compile-bytecode --python .venv/bin/python \
            -e "${ORHARBOR_EXTRAS:-.}"; }; then
  echo "setup: uv could not install orharbor; installing with pip" >&2
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e "${ORHARBOR_EXTRAS:-.}"
fi

# The bubblewrap environment shows a task image's programs from this machine's files of the Debian
# packages the image installs (tmux, ripgrep, ...): install those this machine lacks.
image_missing=$(.venv/bin/python -c 'from orharbor.harbor_env.debian import main; main()')
if [ -n "$image_missing" ]; then
  echo "setup: installing the task images' packages: $image_missing" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends $image_missing >/dev/null
fi
echo "setup: ready (.venv/bin/orharbor)" >&2
