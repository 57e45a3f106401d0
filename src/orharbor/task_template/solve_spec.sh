#!/bin/bash
# Oracle: the spec's golden script, which models and solves the problem from
# the data in /app with a real solver and writes the answer files there.
set -euo pipefail
cd /app
python3 /solution/$golden
