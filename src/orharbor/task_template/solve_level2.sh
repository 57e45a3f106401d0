#!/bin/bash
# Oracle: a solve.py that returns the OR-Tools reference solution of each
# evaluation instance, recognised by the SHA-256 of its canonical JSON.
set -euo pipefail
cp /solution/solve.py /app/solve.py
