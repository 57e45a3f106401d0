"""Episodes on a task exported --for tinker, graded by tinker-cookbook's own HarborReward.

Tinker's default sandbox is Modal, built from the task's environment/Dockerfile; here the same
Dockerfile starts orharbor's bubblewrap Harbor environment, behind Tinker's SandboxInterface
(commands as root, as in Modal). A scripted policy writes the answer as Tinker's bash tool would;
then HarborReward uploads tests/ its way (files read as text), runs test.sh from /root and reads
the reward. Prints one line per answer: oracle, naive, none.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tinker_cookbook.recipes.harbor_rl.harbor_tools import HarborReward
from tinker_cookbook.sandbox.sandbox_interface import SandboxInterface, SandboxResult

from common import answers, download_bytes, start, upload_bytes


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


async def episode(task_dir: Path, target: str, answer: Path | None) -> float:
    sandbox = BubblewrapSandbox(await start(task_dir, "tinker"))
    assert isinstance(sandbox, SandboxInterface)
    try:
        if answer is not None:
            await sandbox.write_file(target, answer.read_text())
        reward, metrics = await HarborReward(tests_dir=task_dir / "tests", sandbox=sandbox)([])
        print(f"tinker {task_dir.name} answer={answer.parent.name + '/' + answer.name if answer else None} "
              f"reward={reward} metrics={metrics}", flush=True)
        return reward
    finally:
        await sandbox.cleanup()


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        for target, answer in answers(Path(folder)):
            asyncio.run(episode(Path(folder), target, answer))
