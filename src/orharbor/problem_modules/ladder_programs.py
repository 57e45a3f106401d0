"""The calibration ladder's programs: a class's ``rule`` and ``search`` as one self-contained solve.py each.

The programs live in ``problem_modules/<class>/ladder/`` (standard library,
numpy and scipy, like any level-2 ``solve.py``); :func:`program` assembles
one, and :func:`run_program` runs it on an instance and returns its answer.
Both the benchmark's calibration ladder (:mod:`orharbor.benchmark.ladder`)
and the dataset build, which starts every reference from the ladder's best
answer (:mod:`orharbor.datasets.build`), use them; they live here, below both.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from orharbor import problem_modules
from orharbor.errors import UserError

#: The line of search.py that sets its budget; the ladder rewrites it.
BUDGET_LINE = re.compile(r"^TIME_LIMIT_S = [0-9.]+$", re.MULTILINE)
#: A line of rule.py that puts ``problem_modules/ladder_shared/NAME.py`` first in the class's programs.
SHARED_LINE = re.compile(r"^# ladder: shared (\w+)$", re.MULTILINE)
#: The folder of the files that SHARED_LINE names.
SHARED_FOLDER = "ladder_shared"


class LadderError(UserError):
    """A policy the ladder cannot run on a task."""


def program(problem: str, policy: str, budget_s: float) -> str:
    """The source of a class's ``rule`` or ``search`` program, a search's budget set to ``budget_s``.

    One self-contained file, made of, in order:

    1. the shared files rule.py names, each by a line ``# ladder: shared NAME``: the text of
       ``problem_modules/ladder_shared/NAME.py``, code that several classes' programs share, written once
       (the routing classes' answer file and local-search frame, jobshop's and wtardiness's iterated
       local search loop);
    2. ladder/rule.py: all of it for ``rule``; for ``search``, without its final ``if __name__ ==
       "__main__":`` block;
    3. for ``search``, ladder/search.py with its ``TIME_LIMIT_S`` line set to ``budget_s``.

    Each part uses the imports and names of the parts before it and rebinds none of them. search.py holds
    only what the search adds: it calls the rule's functions (reading the instance, building the start,
    writing the answer) and has its own entry point. A shared name with no file, a ``# ladder:`` line of
    another form, or such a line in search.py (the rule's shared files are the search's) is a
    :class:`LadderError`.
    """
    text = _ladder_file(problem, policy)
    rule = text if policy == "rule" else _ladder_file(problem, "rule")
    shared = "".join(_shared_file(problem, name) + "\n\n" for name in _shared_names(problem, "rule", rule))
    if policy != "search":
        return shared + text
    if _shared_names(problem, "search", text):
        raise LadderError(f"{problem} ladder/search.py names shared files: rule.py names them for both programs")
    last = ast.parse(rule).body[-1:]
    if not (last and isinstance(last[0], ast.If) and ast.unparse(last[0].test) == "__name__ == '__main__'"):
        raise LadderError(f"{problem} ladder/rule.py does not end with an 'if __name__ == \"__main__\":' block")
    if not BUDGET_LINE.search(text):
        raise LadderError(f"{problem} ladder/search.py has no 'TIME_LIMIT_S = <seconds>' line")
    head = "\n".join(rule.split("\n")[: last[0].lineno - 1])
    return shared + head + "\n" + BUDGET_LINE.sub(f"TIME_LIMIT_S = {float(budget_s)!r}", text, count=1)


def _ladder_file(problem: str, policy: str) -> str:
    path = resources.files(problem_modules.PROBLEMS[problem]).joinpath("ladder", f"{policy}.py")
    if not path.is_file():
        raise LadderError(f"{problem} has no ladder policy {policy!r} (ladder/{policy}.py)")
    return path.read_text(encoding="utf-8")


def _shared_names(problem: str, policy: str, text: str) -> list[str]:
    """The shared files ladder/POLICY.py names, in order, once each; a ``# ladder:`` line of another form is refused."""
    for line in re.findall(r"^#\s*ladder:.*$", text, re.MULTILINE):
        if not SHARED_LINE.fullmatch(line):
            raise LadderError(f"{problem} ladder/{policy}.py: {line!r} is not '# ladder: shared NAME'")
    return list(dict.fromkeys(SHARED_LINE.findall(text)))


def _shared_file(problem: str, name: str) -> str:
    folder = resources.files(problem_modules).joinpath(SHARED_FOLDER)
    path = folder.joinpath(f"{name}.py")
    if not path.is_file():
        known = sorted(p.name.removesuffix(".py") for p in folder.iterdir() if p.name.endswith(".py"))
        raise LadderError(
            f"{problem} ladder/rule.py names an unknown shared file {name!r} "
            f"(problem_modules/{SHARED_FOLDER}/: {', '.join(known)})"
        )
    return path.read_text(encoding="utf-8")


def run_program(problem: str, policy: str, budget_s: float, instance_file: Path, out: Path, cwd: Path) -> None:
    """Run a ladder program on ``instance_file``, writing its answer to ``out``; LadderError if it fails.

    The program runs under this interpreter with ``-I``, in ``cwd``, with a
    safety-net limit of ``3 * budget_s + 60`` s (the rule takes seconds, the
    search its budget).
    """
    source = cwd / f"{policy}.py"
    source.write_text(program(problem, policy, budget_s), encoding="utf-8")
    limit_s = budget_s * 3 + 60
    try:
        done = subprocess.run(
            [sys.executable, "-I", str(source), str(instance_file), str(out)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=limit_s,
        )
    except subprocess.TimeoutExpired:
        raise LadderError(f"{policy}.py ran over {limit_s:g} s") from None
    if done.returncode != 0 or not out.exists():
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise LadderError(f"{policy}.py failed (exit {done.returncode}): {tail[0]}")


def answer_of(problem: str, policy: str, budget_s: float, instance: dict) -> dict:
    """The answer a ladder program gives for ``instance`` (read back as JSON, unchecked); LadderError if it fails."""
    with tempfile.TemporaryDirectory(prefix="orharbor-ladder-") as scratch_name:
        scratch = Path(scratch_name)
        instance_file, out = scratch / "instance.json", scratch / "solution.json"
        instance_file.write_text(json.dumps(instance), encoding="utf-8")
        run_program(problem, policy, budget_s, instance_file, out, scratch)
        try:
            return json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LadderError(f"{policy}.py wrote no JSON answer ({exc})") from None
