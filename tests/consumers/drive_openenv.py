"""One OpenEnv rollout on an orharbor export, scored by OpenEnv's own Harbor rollout code.

Run with the OpenEnv consumer venv's python (scripts/consumers.sh openenv):
    drive_openenv.py ROOT oracle|nop...         (one rollout per policy, in turn)
    drive_openenv.py discover ROOT [ROOT...]    (the task names OpenEnv keeps, per ROOT)
ROOT holds the export (OpenEnv takes ROOT or ROOT/tasks/). OpenEnv's own loader discovers the
task with Harbor's validation switched on (OPENENV_VALIDATE_TASKS=1). Its rollout takes a sandbox
from Harbor's built-in type names and a harness from its own seam list, so
`orharbor.consumers.serve_as("docker")` routes the sandbox name to orharbor's bubblewrap
environment, and the scripted policy replaces the agent of the trial config OpenEnv builds with
Harbor's oracle or nop agent (no model is called). Prints one JSON line per rollout with the reward
OpenEnv read, or one JSON list per ROOT. (Importing OpenEnv and Harbor takes seconds: one run does
everything a test needs.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from importlib.metadata import version

os.environ["OPENENV_VALIDATE_TASKS"] = "1"  # read at import: discovery keeps only Harbor-valid tasks


def discover(root: str) -> None:
    """Print the task names OpenEnv's loader keeps under ROOT, Harbor's validation on."""
    from openenv.harbor.tasks import has_symlinks, resolve_task_dirs

    print(json.dumps(sorted(d.name for d in resolve_task_dirs(root) if not has_symlinks(d))), flush=True)


def rollouts(root: str, policies: tuple[str, ...]) -> None:
    """One rollout of the single task under ROOT per policy, in turn; prints one JSON line each."""
    unknown = [policy for policy in policies if policy not in ("oracle", "nop")]
    if unknown or not policies:
        raise SystemExit(f"unknown policies {unknown!r}" if unknown else "no policy given")
    from harbor.models.trial.config import AgentConfig
    from openenv.core.harness.capture.sessions import SessionRegistry
    from openenv.harbor import rollout
    from openenv.harbor.tasks import has_symlinks, resolve_task_dirs

    from orharbor.consumers import serve_as

    serve_as("docker")
    task_dirs = resolve_task_dirs(root)
    if len(task_dirs) != 1 or has_symlinks(task_dirs[0]):
        raise SystemExit(f"OpenEnv found {task_dirs} under {root} (or symlinks in it)")

    build = rollout.build_trial_config

    def playing(policy: str):
        """OpenEnv's trial config with Harbor's POLICY agent in place of the harness's."""

        def scripted(**kwargs):
            config = build(**kwargs)
            config.agent = AgentConfig(name=policy)
            return config

        return scripted

    for policy in policies:
        rollout.build_trial_config = playing(policy)
        with tempfile.TemporaryDirectory(prefix="openenv-trials-") as trials:
            result = asyncio.run(
                rollout.run_rollout(
                    task_dir=task_dirs[0],
                    harness="opencode",
                    sandbox="docker",
                    registry=SessionRegistry(),
                    intercept_url="http://127.0.0.1:9/v1",
                    model="scripted",
                    trials_dir=trials,
                )
            )
        print(
            json.dumps(
                {
                    "consumer": "openenv",
                    "version": version("openenv"),
                    "task": task_dirs[0].name,
                    "policy": policy,
                    "reward": result.reward,
                    "reward_key": result.reward_key,
                    "error": result.error,
                }
            ),
            flush=True,
        )


def main(first: str, *rest: str) -> None:
    if first == "discover":
        for root in rest:
            discover(root)
    else:
        rollouts(first, rest)


if __name__ == "__main__":
    main(*sys.argv[1:])
