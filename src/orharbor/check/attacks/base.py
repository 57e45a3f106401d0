"""What the attack modules build with: an attack policy, the probe programs, shell that plants files.

The probes are real Python files in ``probes/`` (package data), read with
importlib.resources; an attack hands one to the agent or the verifier as it
is, or followed by one line that calls it with the task's data.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources

from orharbor.check.policies import GROUP, Policy

#: Places a hostile agent would try to make Python pick up its code.
PYTHON_DIRS = (
    "$HOME/.local/lib/python3.12/site-packages",
    "$HOME/.local/lib/python3.11/site-packages",
    "/app",
    "/tmp",
    "/usr/local/lib/python3.12/site-packages",
    "/opt/orharbor-solver/lib/python3.12/site-packages",
)


def attack(name: str, expected: float, description: str, **kwargs) -> Policy:
    """An attack policy that must earn at most ``expected``."""
    return Policy(name, expected, description, attack=True, **kwargs)


def of_group(attacks: list[Policy]) -> list[Policy]:
    """``attacks`` with scope ``group``: the task's code and configuration decide their outcome, not its instance."""
    return [replace(policy, scope=GROUP) for policy in attacks]


def probe(name: str) -> str:
    """The text of ``probes/<name>.py`` (``name`` may hold a subfolder: ``level2/busy_loop``)."""
    return resources.files(__package__).joinpath("probes", f"{name}.py").read_text(encoding="utf-8")


def for_each_dir(dirs: tuple[str, ...], filename: str, content: str, executable: bool = False) -> str:
    """Shell that writes ``content`` to ``filename`` in every dir it can (errors ignored)."""
    body = f"cat > \"$d/{filename}\" 2>/dev/null <<'ORH'\n{content}ORH\n"
    if executable:
        body += f'chmod +x "$d/{filename}" 2>/dev/null\n'
    quoted = " ".join(f'"{d}"' for d in dirs)
    return f'for d in {quoted}; do\nmkdir -p "$d" 2>/dev/null\n{body}done\n'


def leave_behind(name: str, args: str = "", settle_s: float = 0.2) -> str:
    """Agent-phase shell that starts ``probes/<name>.py`` detached (``setsid``), so it outlives the agent."""
    path = f"/tmp/orh-{name}.py"
    return (
        f"cat > {path} <<'ORH'\n{probe(name)}ORH\n"
        f"setsid python3 {path} {args} </dev/null >/dev/null 2>&1 &\nsleep {settle_s}\n"
    )
