"""`harbor run` as a user runs it, with orharbor's bubblewrap environment, and what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HARBOR = Path(sys.executable).with_name("harbor")
ENVIRONMENT = "orharbor.harbor_env:BubblewrapEnvironment"


def harbor_run(args: list[str], jobs: Path, name: str) -> tuple[dict, list[dict]]:
    """Run ``harbor run ARGS`` into ``jobs/name``; the job's result.json and every trial's."""
    env = {**os.environ, "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "120"}
    # every shipped task, two trials at a time: minutes on an idle machine, several times that on a loaded
    # one; the timeout is only a safety net against a hang
    done = subprocess.run(
        [HARBOR, "run", *args, "-e", ENVIRONMENT, "-o", str(jobs), "-n", "2", "-q", "--job-name", name],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    job = jobs / name
    trials = [json.loads(p.read_text()) for p in sorted(job.glob("*/result.json"))]
    return json.loads((job / "result.json").read_text()), trials
