#!/bin/bash
# Oracle: orharbor's retail model (OR-Tools) solves the scenario's data and
# writes /app/answer.json; its code is handed in as /app/model.py.
set -euo pipefail
cd /app
cp /solution/retail_model.py /app/model.py
python3 /app/model.py /solution/data.json /app/answer.json --time-limit $time_limit
