"""One Tinker episode on a task exported --for tinker, graded by tinker-cookbook's own HarborReward.

Run with the tinker consumer venv's python (scripts/consumers.sh tinker):
    drive_tinker.py TASK_DIR oracle|naive|nop

Tinker's default sandbox is Modal, built from the task's environment/Dockerfile; here the same
Dockerfile starts orharbor's bubblewrap Harbor environment, behind Tinker's SandboxInterface
(commands as root, as in Modal). A scripted policy writes the answer as Tinker's bash tool would;
then HarborReward uploads tests/ its way (files read as text), runs test.sh from /root and reads
the reward. Prints one JSON line with the reward Tinker read.
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "torch_stub"))  # before tinker_cookbook imports torch

from tinker_cookbook.recipes.harbor_rl.harbor_tools import HarborReward  # noqa: E402
from tinker_cookbook.sandbox.sandbox_interface import SandboxInterface, SandboxResult  # noqa: E402

from episode_sandbox import answer, download_bytes, start, upload_bytes  # noqa: E402


class BubblewrapSandbox:
    """Tinker's SandboxInterface over a running BubblewrapEnvironment."""

    def __init__(self, env):
        self.env = env

    @property
    def sandbox_id(self) -> str:
        return self.env.session_id

    async def send_heartbeat(self, timeout: int = 30) -> None:
        return None

    async def run_command(self, command, workdir=None, timeout=60, max_output_bytes=None):
        r = await self.env.exec(command, cwd=workdir, timeout_sec=timeout)
        return SandboxResult(stdout=r.stdout or "", stderr=r.stderr or "", exit_code=r.return_code)

    async def read_file(self, path, max_bytes=None, timeout=60):
        try:
            data = await download_bytes(self.env, path)
        except Exception as exc:  # as a missing file reads in a sandbox: a failed command
            return SandboxResult(stdout="", stderr=str(exc), exit_code=1)
        return SandboxResult(stdout=data[:max_bytes].decode(errors="replace"), stderr="", exit_code=0)

    async def write_file(self, path, content, executable=False, timeout=60):
        await upload_bytes(self.env, content.encode() if isinstance(content, str) else content, path)
        if executable:
            await self.env.exec(f"chmod +x {path}")
        return SandboxResult(stdout="", stderr="", exit_code=0)

    async def cleanup(self) -> None:
        await self.env.stop(delete=True)


async def episode(task_dir: Path, policy: str) -> dict:
    target, given = answer(task_dir, policy)
    sandbox = BubblewrapSandbox(await start(task_dir, "tinker"))
    assert isinstance(sandbox, SandboxInterface)
    try:
        if given is not None:
            await sandbox.write_file(target, given.read_text())
        reward, metrics = await HarborReward(tests_dir=task_dir / "tests", sandbox=sandbox)([])
    finally:
        await sandbox.cleanup()
    return {
        "consumer": "tinker",
        "version": version("tinker-cookbook"),
        "task": task_dir.name,
        "policy": policy,
        "reward": reward,
        "metrics": metrics,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(episode(Path(sys.argv[1]), sys.argv[2]))))
