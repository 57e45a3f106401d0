#!/usr/bin/env bash
# The main job on the shipped dataset: export every shipped row as a Harbor
# task under tasks/, prove each one solvable by its reference through Harbor's
# trial code (job folder kept in jobs/), and report what each agent scored.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Bytecode is written (ignored by git) even where the environment says not to: the set-up compiles none,
# and every command of the job would otherwise compile what it imports again.
unset PYTHONDONTWRITEBYTECODE
.venv/bin/orharbor export --out "${1:-tasks}" --force
.venv/bin/orharbor check "${1:-tasks}" -j "$(nproc)" --jobs-dir jobs
job="$(ls -td jobs/check-* | head -n 1)"   # the folder this check just made (never an old one: check makes a new one)
.venv/bin/orharbor report "$job" --html "$job/report.html"
