"""What ``orharbor check`` prints: a line per task as it ends, then how each attack fared; plain tables."""

from __future__ import annotations

from orharbor.check.results import CheckResult, PolicyResult
from orharbor.text import columns

#: The reference policies, in the order of their columns.
REFERENCE_POLICIES = ("oracle", "naive", "nothing")
HEADER = ["task", "level", "mode", *REFERENCE_POLICIES, "attacks", "status"]


def format_header(task_width: int) -> str:
    """The header above :func:`format_line` lines."""
    return _row(HEADER, task_width, "done at")


def format_line(result: CheckResult, task_width: int) -> str:
    """One task's line, printed as soon as the task is done."""
    return _row(_cells(result), task_width, f"{result.ended_s:6.1f} s")


def format_attacks(results: list[CheckResult]) -> str:
    """One row per attack: in how many of its trials it was held to the failure reward without a verifier crash.

    An outcome a task shares with its attack group's representative counts once, where it ran; a line
    after the table says how many groups the group attacks ran on.
    """
    outcome: dict[str, list[PolicyResult]] = {}
    for r in results:
        for p in r.policies:
            if p.attack and p.ran_on is None:
                outcome.setdefault(p.policy, []).append(p)
    rows = [["attack", "held", "best reward"]]
    for name, tries in outcome.items():
        rewards = [p.reward for p in tries if p.reward is not None]
        rows.append([name, f"{sum(p.ok for p in tries)}/{len(tries)}", f"{max(rewards):+.3f}" if rewards else "-"])
    table = columns(rows)
    grouped = [r for r in results if r.attack_group is not None]
    if not grouped:
        return table
    groups = len({r.attack_group for r in grouped})
    return (
        f"{table}\ngroup attacks ran once per group of tasks with the same images, verifier and configuration: "
        f"{_count(groups, 'group')} for {_count(len(grouped), 'task')} (--each-task runs them on every task)"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _cell(p: PolicyResult | None) -> str:
    return "-" if p is None or p.reward is None else f"{p.reward:+.3f}"


def _cells(r: CheckResult) -> list[str]:
    by_name = {p.policy: p for p in r.policies}
    cells = [r.task, str(r.level or "-") if r.kind == "algorithm" else "model", r.mode]
    cells += [_cell(by_name.get(name)) for name in REFERENCE_POLICIES]
    attacks = [p for p in r.policies if p.attack]
    cells.append(f"{sum(p.ok for p in attacks)}/{len(attacks)} held" if attacks else "-")
    cells.append("ok" if r.ok else "FAIL")
    return cells


def _row(cells: list[str], task_width: int, last: str) -> str:
    return (
        f"{cells[0].ljust(task_width)}  {cells[1]:>5}  {cells[2]:<8}  {cells[3]:>7}  {cells[4]:>7}  "
        f"{cells[5]:>7}  {cells[6]:>12}  {cells[7]:<4}  {last:>8}"
    )
