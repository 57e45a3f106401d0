"""The agents ``orharbor check`` runs through Harbor's trial code, loadable by import path.

- :class:`NaiveAgent` hands in the task's ``solution/naive/`` (the naive
  baseline's deliverable, or a wrong answer in modelling tasks), which must
  score 0.0:
  ``harbor run -p tasks/ -a orharbor.check.agents:NaiveAgent --ak task_dir=tasks/<task>``.
- :class:`PolicyAgent` acts out one :class:`orharbor.check.policies.Policy` (an
  attack): it writes the policy's files, symlinks and sparse files into ``/app``
  and runs its shell script, all as the task's agent user.

Harbor's own ``oracle`` and ``nop`` agents are the other two reference policies.
Both agents work through the environment's ``exec`` and ``upload_file`` only,
so they act the same on the bubblewrap environment, Docker or a cloud sandbox.
"""

from __future__ import annotations

import base64
import shlex
import tempfile
import uuid
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from orharbor.check.policies import Policy

#: Where the agent's script is staged in the environment (root-owned, readable by the agent user).
STAGE_DIR = "/tmp"


class _ScriptAgent(BaseAgent):
    """An agent that runs one generated bash script in /app as the task's agent user."""

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    def script(self) -> str:
        raise NotImplementedError

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        staged = f"{STAGE_DIR}/orh-agent-{uuid.uuid4().hex}.sh"
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "agent.sh"
            path.write_text(self.script())
            path.chmod(0o644)
            await environment.upload_file(path, staged)
        try:
            result = await environment.exec(f"bash {shlex.quote(staged)}", cwd="/app")
        finally:
            await environment.exec(f"rm -f {shlex.quote(staged)}", user="root")
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "agent.txt").write_text(
            f"exit {result.return_code}\n--- stdout\n{result.stdout or ''}\n--- stderr\n{result.stderr or ''}"
        )
        context.metadata = {**(context.metadata or {}), "exit_code": result.return_code}


class NaiveAgent(_ScriptAgent):
    """Copies ``TASK/solution/naive/`` into ``/app``: the naive baseline's deliverable."""

    def __init__(self, logs_dir: Path, task_dir: str | Path, **kwargs) -> None:
        super().__init__(logs_dir=logs_dir, **kwargs)
        self.task_dir = Path(task_dir)
        if not (self.task_dir / "solution" / "naive").is_dir():
            raise ValueError(
                f"{self.task_dir} has no solution/naive/ folder: not an orharbor task "
                "(pass task_dir=<the task's folder>)"
            )

    @staticmethod
    def name() -> str:
        return "orharbor-naive"

    def script(self) -> str:
        naive = self.task_dir / "solution" / "naive"
        files = {str(p.relative_to(naive)): p.read_bytes() for p in sorted(naive.rglob("*")) if p.is_file()}
        return write_files_script(files)


class PolicyAgent(_ScriptAgent):
    """Acts out one policy, given as the dict of :func:`policy_to_kwargs`."""

    def __init__(self, logs_dir: Path, policy: dict, **kwargs) -> None:
        super().__init__(logs_dir=logs_dir, **kwargs)
        self.policy = policy_from_kwargs(policy)

    @staticmethod
    def name() -> str:
        return "orharbor-attack"

    def script(self) -> str:
        policy = self.policy
        lines = [write_files_script(policy.files)]
        for name, target in policy.symlinks.items():
            lines.append(
                f'mkdir -p -- "$(dirname {shlex.quote(name)})"; ln -sfn {shlex.quote(target)} {shlex.quote(name)}'
            )
        for name, (head, size) in policy.sparse_files.items():
            lines.append(write_files_script({name: head}))
            lines.append(f"truncate -s {int(size)} {shlex.quote(name)}")
        if policy.agent_script:
            lines.append(policy.agent_script)
        return "\n".join(lines) + "\n"


#: The import paths Harbor loads the check's own agents by (``AgentConfig.import_path``).
NAIVE_AGENT = f"{__name__}:{NaiveAgent.__name__}"
POLICY_AGENT = f"{__name__}:{PolicyAgent.__name__}"


def write_files_script(files: dict[str, bytes]) -> str:
    """Bash that writes each file (path relative to the working directory) from base64."""
    lines = []
    for name, data in files.items():
        quoted = shlex.quote(name)
        encoded = base64.b64encode(data).decode()
        lines.append(f"mkdir -p -- \"$(dirname {quoted})\" && base64 -d > {quoted} <<'ORH_EOF'\n{encoded}\nORH_EOF")
    return "\n".join(lines)


def policy_to_kwargs(policy: Policy) -> dict:
    """A JSON-able form of ``policy`` for Harbor's agent kwargs (kept in each trial's config.json)."""
    return {
        "name": policy.name,
        "expected": policy.expected,
        "description": policy.description,
        "files": {k: base64.b64encode(v).decode() for k, v in policy.files.items()},
        "symlinks": dict(policy.symlinks),
        "sparse_files": {k: [base64.b64encode(h).decode(), s] for k, (h, s) in policy.sparse_files.items()},
        "agent_script": policy.agent_script,
        "attack": policy.attack,
    }


def policy_from_kwargs(data: dict) -> Policy:
    """The inverse of :func:`policy_to_kwargs`."""
    return Policy(
        name=data["name"],
        expected=float(data["expected"]),
        description=data.get("description", ""),
        files={k: base64.b64decode(v) for k, v in data.get("files", {}).items()},
        symlinks=dict(data.get("symlinks", {})),
        sparse_files={k: (base64.b64decode(h), int(s)) for k, (h, s) in data.get("sparse_files", {}).items()},
        agent_script=data.get("agent_script"),
        attack=bool(data.get("attack", True)),
    )
