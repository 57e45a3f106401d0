#!/usr/bin/env bash
# The main job on the shipped dataset: export every shipped row as a Harbor
# task under tasks/ and prove each one solvable by its reference.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/orharbor export --out "${1:-tasks}" --force
.venv/bin/orharbor check "${1:-tasks}" -j "$(nproc)"
