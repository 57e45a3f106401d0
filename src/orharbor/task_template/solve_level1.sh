#!/bin/bash
# Oracle: the OR-Tools reference solution, precomputed when the dataset was built.
set -euo pipefail
cp /solution/solution.json /app/solution.json
