"""One TRL episode on an orharbor export, scored by TRL's own Harbor environment and reward function.

Run with the TRL consumer venv's python (scripts/consumers.sh trl):
    drive_trl.py ROOT oracle|nop|unstarted...   (one episode per policy, in turn)
ROOT holds the export in ROOT/tasks/ (the layout `trl.experimental.harbor.HarborSpec` loads).
TRL names Harbor environments by type only, so `orharbor.consumers.serve_as("docker")` routes
that name to orharbor's bubblewrap environment. The scripted policy uses TRL's own `bash` tool:
`oracle` writes the task's reference answer to /app/solution.json, `nop` makes no call,
`unstarted` reads the reward of an env that never started an episode. Prints one
JSON line per policy with the reward TRL read. (Importing TRL takes seconds: one run plays every
policy a test needs.)
"""

from __future__ import annotations

import gc
import json
import os
import shlex
import sys
import traceback
from importlib.metadata import version
from pathlib import Path


def episode(spec, policy: str) -> None:
    """One episode of TRL's env for the first task of SPEC with POLICY; prints the JSON line."""
    rows = spec.train_dataset
    env = spec.environment_factory()
    if policy == "unstarted":  # TRL's own answer for an env that never ran an episode
        (reward,) = spec.reward_funcs(environments=[env])
        print(
            json.dumps(
                {
                    "consumer": "trl",
                    "version": version("trl"),
                    "task": Path(rows[0]["task_dir"]).name,
                    "policy": policy,
                    "reward": reward,
                }
            ),
            flush=True,
        )
        return
    task_dir = rows[0]["task_dir"]
    env.reset(task_dir=task_dir)
    if policy == "oracle":
        answer = (Path(task_dir) / "solution" / "solution.json").read_text()
        env.bash(f"mkdir -p /app && printf %s {shlex.quote(answer)} > /app/solution.json")
    elif policy != "nop":
        raise SystemExit(f"unknown policy {policy!r}")
    (reward,) = spec.reward_funcs(environments=[env])
    # where TRL ran the verifier: its reward file in the agent's own sandbox means no separate verifier
    here = env.bash("test -f /logs/verifier/reward.json && echo verifier-ran-here").strip() == "verifier-ran-here"
    del env
    gc.collect()
    print(
        json.dumps(
            {
                "consumer": "trl",
                "version": version("trl"),
                "task": Path(task_dir).name,
                "policy": policy,
                "reward": reward,
                "verifier_in_agent_sandbox": here,
            }
        ),
        flush=True,
    )


def main(root: str, *policies: str) -> None:
    from trl.experimental.harbor import HarborSpec

    from orharbor.consumers import serve_as

    serve_as("docker")
    spec = HarborSpec(root, agent="bash", environment_type="docker")
    for policy in policies:
        episode(spec, policy)


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except BaseException:
        # an episode that failed leaves TRL's env to its __del__, whose teardown of a sandbox that never
        # started can block for good (seen with Harbor's docker environment): report and leave at once
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
