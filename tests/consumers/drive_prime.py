"""One Prime episode on a task exported --for prime, run by Prime's verifiers 0.4.0 code.

Run with the prime consumer venv's python (scripts/consumers.sh prime):
    drive_prime.py TASK_DIR oracle|naive|nop... [--runtime-user USER]

verifiers' parse_task loads the task; HarborTask.finalize runs its [[verifier.collect]] hook as
the runtime's default user and collects the artifacts. Shared mode: HarborTask.solved stages
tests/ (its tar upload), runs test.sh and reads the reward. Separate mode, as verifiers' Harbor
env grades it: a fresh box from the verifier's Dockerfile (standing in for its image), the
artifacts restored by verifiers' own restore(), then the grader task's stage_verifier and solved.
The runtime is an adapter over orharbor's bubblewrap Harbor environment started from the task's
Dockerfile (standing in for the prebuilt image). A scripted policy writes the answer as the
task's agent user. With --runtime-user agent the runtime's
default user is not root: the hook must then fail the rollout. Prints one JSON line per policy,
one episode each, in turn: the reward verifiers read, or the error with which it refused the task
or failed the rollout. (Importing verifiers takes 8 s: one run plays every policy a test needs.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import types
from importlib.metadata import version
from pathlib import Path

from verifiers.v1.runtimes.base import ProgramResult
from verifiers.v1.tasksets.harbor.taskset import HarborConfig, HarborTask, parse_task, verifier_box_data
from verifiers.v1.utils.artifacts import restore

from episode_sandbox import answer, download_bytes, start, start_verifier, upload_bytes


class BubblewrapRuntime:
    """The parts of verifiers' Runtime that HarborTask uses, over a running BubblewrapEnvironment."""

    def __init__(self, env, user: str | None):
        self.env, self.user = env, user
        self.config = types.SimpleNamespace(workdir="/app")

    async def run(self, argv, env):
        r = await self.env.exec(shlex.join(argv), env=env or None, timeout_sec=600, user=self.user)
        return ProgramResult(exit_code=r.return_code, stdout=r.stdout or "", stderr=r.stderr or "")

    async def write(self, path, data):
        await upload_bytes(self.env, data if isinstance(data, bytes) else data.encode(), path)

    async def read(self, path, max_bytes=None):
        data = await download_bytes(self.env, path)
        if max_bytes is not None and len(data) > max_bytes:
            raise OSError(f"{path} is over {max_bytes} bytes")
        return data

    async def prepare_execution(self, policy):
        return None


async def episode(task_dir: Path, policy: str, user: str | None) -> dict:
    report = {"consumer": "prime", "version": version("verifiers"), "task": task_dir.name, "policy": policy}
    try:
        data = parse_task(task_dir, 0, HarborConfig())
    except ValueError as exc:
        return {**report, "refused": str(exc)}
    report["mode"] = "separate" if data.verifier else "shared"
    task = HarborTask(data)
    target, given = answer(task_dir, policy)
    env = await start(task_dir, "prime")
    trace = types.SimpleNamespace(state=types.SimpleNamespace(artifacts={}), metrics={})
    trace.record_metrics = trace.metrics.update
    try:
        if given is not None:
            r = await env.exec(f"printf '%s' {shlex.quote(given.read_text())} > {target}", user=data.agent_user)
            assert r.return_code == 0, r
        try:
            await task.finalize(trace, BubblewrapRuntime(env, user))
        except RuntimeError as exc:  # verifiers fails the rollout on a failed collect hook
            return {**report, "rollout_failed": str(exc)[:200]}
        if data.verifier is None:
            scores = await task.solved(BubblewrapRuntime(env, user), trace)
        else:  # as verifiers' Harbor env grades a separate verifier: a fresh box, the artifacts restored
            grader = HarborTask(verifier_box_data(data))
            box = await start_verifier(task_dir)
            try:
                runtime = BubblewrapRuntime(box, None)
                await restore(runtime, trace.state.artifacts)
                await grader.stage_verifier(trace, runtime)
                scores = await grader.solved(runtime, trace)
            finally:
                await box.stop(delete=True)
    finally:
        await env.stop(delete=True)
    return {**report, "reward": scores["reward"], "artifacts": sorted(trace.state.artifacts)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("task", type=Path)
    parser.add_argument("policy", nargs="+", choices=["oracle", "naive", "nop"])
    parser.add_argument("--runtime-user", default=None)
    args = parser.parse_args()
    for policy in args.policy:
        print(json.dumps(asyncio.run(episode(args.task, policy, args.runtime_user))), flush=True)
