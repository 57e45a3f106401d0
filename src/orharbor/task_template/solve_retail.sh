#!/bin/bash
# Oracle: hands in orharbor's retail model (OR-Tools MathOpt with HiGHS) as /app/model.py,
# its default time limit set inside the task's run limit. The verifier runs it on the
# scenario's data and grades the answer.json that run writes.
set -euo pipefail
cp /solution/model.py /app/model.py
