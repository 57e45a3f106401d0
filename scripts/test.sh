#!/usr/bin/env bash
# The test command: set up (bubblewrap, .venv), then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
