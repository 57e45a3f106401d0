"""Run an RL consumer's driver (tests/consumers/drive_NAME.py) in that consumer's own venv."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def consumer_python(name: str) -> Path:
    """The consumer venv's python, built first by scripts/consumers.sh when it is missing or its pin list changed
    (the test command builds them all up front; a test run on its own, the fast subset say, builds what it uses)."""
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "consumers.sh"), name], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, f"scripts/consumers.sh {name} failed:\n{done.stderr[-3000:]}"
    python = REPO / ".venv-consumers" / name / "bin" / "python"
    assert python.is_file(), f"scripts/consumers.sh {name} left no {python}"
    return python


def drive(name: str, target: Path, policy: str, *extra: str) -> dict:
    """Run drive_NAME.py on TARGET (a task or a tasks root) with POLICY; the JSON line it printed last."""
    return json.loads(_run(name, target, policy, *extra)[-1])


def drive_each(name: str, target: Path, policies: list[str], *extra: str) -> dict[str, dict]:
    """Run drive_NAME.py once on TARGET with every one of POLICIES (a driver that takes several); policy -> the
    JSON line it printed for that policy's episode, its last lines in the order asked."""
    lines = _run(name, target, *policies, *extra)[-len(policies) :]
    found = {policy: json.loads(line) for policy, line in zip(policies, lines)}
    assert all(found[policy].get("policy") == policy for policy in policies), found
    return found


def _run(name: str, target: Path, *args: str) -> list[str]:
    """The lines drive_NAME.py TARGET ARGS... printed; it must exit 0."""
    env = {
        **os.environ,
        "HARBOR_TELEMETRY": "0",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TRL_EXPERIMENTAL_SILENCE": "1",
    }
    driver = REPO / "tests" / "consumers" / f"drive_{name}.py"
    # one sandboxed episode takes seconds; the timeout is only a safety net against a hang
    done = subprocess.run(
        [consumer_python(name), driver, str(target), *args], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout.strip().splitlines()
