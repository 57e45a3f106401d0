"""A new problem class is tested by adding its folder: a toy eighth class runs the whole contract suite.

The toy, single-machine total weighted completion time (1 || sum w_j C_j, solved
exactly by Smith's rule), is written into a package in tmp_path and registered
with one line from a pytest plugin there. tests/test_contract.py then runs in a
subprocess with ``-k toy``: every per-class property must run for the toy and
pass, except ``test_class_has_shipped_rows_for_both_levels``, which must fail
(the toy ships no dataset), proving that guard works; tests/test_ladder_programs.py
runs every per-class check of its ladder programs the same way.

The toy's folder is exactly the files the checklist in docs/contributing.md lists,
and the registry refuses it without any one of them, naming the file: the list is
what a class needs, no more and no less.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from textwrap import dedent

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.contract import ProblemClass

REPO = Path(__file__).resolve().parents[1]
#: The checklist of a new class: its table lists every file of the folder.
CONTRIBUTING = REPO / "docs" / "contributing.md"

TOY = {
    "__init__.py": '''
        """Single-machine total weighted completion time (1 || sum w_j C_j): the ``toy`` problem class."""

        from orharbor.problem_modules.contract import Problem

        from .baseline import BASELINE, baseline
        from .formats import FORMATS, read, write
        from .generator import GENERATOR_VERSION, SIZES, generate
        from .reference import REFERENCE, reference
        from .rules import validate_instance
        from .verify import evaluate

        NAME = "toy"
        TITLE = "Single-machine total weighted completion time"
        OBJECTIVE = "total weighted completion time"

        PROBLEM = Problem(
            NAME=NAME, TITLE=TITLE, OBJECTIVE=OBJECTIVE,
            SIZES=SIZES, GENERATOR_VERSION=GENERATOR_VERSION, generate=generate,
            FORMATS=FORMATS, read=read, write=write,
            BASELINE=BASELINE, baseline=baseline,
            REFERENCE=REFERENCE, reference=reference,
            validate_instance=validate_instance,
            evaluate=evaluate,
            package=__name__,
        )
        ''',
    "generator.py": '''
        """Toy instances: n jobs, processing times and weights uniform on 1..10, drawn per seed."""

        from orharbor.problem_modules.seeds import count_rng

        SIZES = ("n5", "n10", "n20")
        GENERATOR_VERSION = 1
        GOLDEN = {(0, "n5"): "942a7dda7adefa1ab961a3becd06c8c3c882eb099a75630028c32821e91df285",
                  (7, "n20"): "32bc5c225bd0fb9cd5674af1666dc5ca805dfcf484c83c26da69293a1ee606a3"}


        def generate(seed: int, size: str) -> dict:
            """The instance of ``(seed, size)``."""
            n, derived, rng = count_rng("toy", seed, size, SIZES)
            return {"problem": "toy", "name": f"toy-{size}-s{seed}", "n_jobs": n,
                    "processing_times": [rng.randint(1, 10) for _ in range(n)],
                    "weights": [rng.randint(1, 10) for _ in range(n)],
                    "generator": {"seed": seed, "size": size, "version": GENERATOR_VERSION, "prng_seed": derived}}
        ''',
    "formats.py": '''
        """The toy's ``jobs`` format: a JSON header line, then one ``[p, w]`` JSON line per job."""

        import json

        from orharbor.problem_modules.textfile import check_format, reader, split_lines

        FORMATS = ("jobs",)
        HEADER = 'the header line {"name": ..., "n_jobs": n}'


        def parse(text: str, name: str = "<text>", stem: str | None = None) -> dict:
            """The instance of a ``jobs`` text."""
            lines, _ = split_lines(text, name)
            lineno, head = _json(lines, HEADER)
            if not isinstance(head, dict) or type(head.get("n_jobs")) is not int or head["n_jobs"] < 1:
                raise lines.error(lineno, f"expected {HEADER} with n >= 1")
            jobs = []
            for j in range(head["n_jobs"]):
                lineno, job = _json(lines, f"job {j} as [p, w]")
                if not (isinstance(job, list) and len(job) == 2 and all(type(v) is int and v >= 0 for v in job)):
                    raise lines.error(lineno, f"expected job {j} as [p, w], two non-negative integers")
                jobs.append(job)
            lines.tail("the last job")
            return {"problem": "toy", "name": str(head.get("name") or stem or "toy"), "n_jobs": len(jobs),
                    "processing_times": [p for p, _ in jobs], "weights": [w for _, w in jobs]}


        def _json(lines, what: str):
            lineno, line = lines.next(what)
            try:
                return lineno, json.loads(line)
            except ValueError:
                raise lines.error(lineno, f"expected {what}, got {line.strip()[:40]!r}") from None


        read = reader(FORMATS, "toy", parse)


        def write(instance: dict, fmt: str = "jobs") -> str:
            """The ``jobs`` text of an instance."""
            check_format(fmt, FORMATS, "toy", optional=False)
            rows = [json.dumps([p, w]) for p, w in zip(instance["processing_times"], instance["weights"])]
            return "\\n".join([json.dumps({"name": instance["name"], "n_jobs": instance["n_jobs"]}), *rows]) + "\\n"
        ''',
    "verify.py": '''
        """Toy verifier: standard library only (copied into every task)."""

        from orharbor.verifiers.strict import Infeasible, require_dict, require_int, require_list


        def evaluate(instance: dict, solution) -> int:
            """Total weighted completion time of ``solution = {"sequence": [job, ...]}``."""
            n = instance["n_jobs"]
            require_dict(solution, "solution", ("sequence",))
            sequence = require_list(solution["sequence"], "solution.sequence", n)
            seen = set()
            for k, job in enumerate(sequence):
                require_int(job, f"solution.sequence[{k}]", lo=0, hi=n - 1)
                if job in seen:
                    raise Infeasible(f"solution.sequence[{k}]: job {job} appears twice")
                seen.add(job)
            return weighted_completion(instance, sequence)


        def weighted_completion(instance: dict, sequence: list[int]) -> int:
            """sum_j w_j C_j of a trusted permutation, from time 0 without idle time."""
            time = total = 0
            for job in sequence:
                time += instance["processing_times"][job]
                total += instance["weights"][job] * time
            return total
        ''',
    "rules.py": '''
        """The toy instance's own rules."""

        from orharbor.problem_modules.checks import instance_object, integer, integers


        def validate_instance(instance) -> dict:
            """``instance`` if it is a toy instance; else InvalidInstance naming the field."""
            inst = instance_object(instance, "toy", ("n_jobs", "processing_times", "weights"))
            n = integer(inst["n_jobs"], "n_jobs", lo=1)
            integers(inst["processing_times"], "processing_times", n, lo=0)
            integers(inst["weights"], "weights", n, lo=1)
            return inst
        ''',
    "baseline.py": '''
        """The naive toy answer: the jobs in index order."""

        BASELINE = "Index order: jobs 0, 1, ..., n-1, one after the other from time 0."


        def baseline(instance: dict) -> dict:
            """The index order."""
            return {"sequence": list(range(instance["n_jobs"]))}
        ''',
    "reference.py": '''
        """Exact toy reference: Smith's rule (weighted shortest processing time first) is optimal."""

        from fractions import Fraction

        from orharbor.problem_modules import warm_start

        from .verify import evaluate, weighted_completion

        REFERENCE = "Smith's rule (weighted shortest processing time first), which is optimal"


        def reference(instance: dict, *, time_limit_s: float, workers: int, seed: int = 0,
                      hint: dict | None = None) -> tuple[dict, dict]:
            """The optimal sequence (a given ``hint`` if it ties with it) and its meta record."""
            p, w = instance["processing_times"], instance["weights"]
            order = sorted(range(instance["n_jobs"]), key=lambda j: (Fraction(p[j], w[j]), j))
            objective = weighted_completion(instance, order)
            own = warm_start.Start({"sequence": order}, objective, "Smith's rule")
            start = warm_start.choose(instance, evaluate, own, hint)
            meta = {"solver": "smith-rule", "version": "1", "status": "OPTIMAL", "time_limit_s": time_limit_s,
                    "workers": workers, "seed": seed, "objective": objective, "bound": objective,
                    "hint": start.record()}
            return start.solution, meta
        ''',
    "statement.md": """
        # Single-machine total weighted completion time (minimise the total weighted completion time)

        One machine processes `n_jobs` jobs, one at a time, from time 0. Choose the order.

        ## Instance (JSON)

        | field | meaning |
        |---|---|
        | `n_jobs` | number of jobs `n`, numbered `0 .. n-1` |
        | `processing_times` | `n` non-negative integers: how long each job takes |
        | `weights` | `n` positive integers: the weight of each job |

        ## Solution (JSON)

        `{"sequence": [j, ...]}`: every job exactly once, in processing order.

        ## Feasibility rules

        Every job appears exactly once; jobs run back to back from time 0.

        ## Objective

        The sum over the jobs of `weights[j]` times the completion time of job `j`. Minimise it.

        ## How instances are generated

        Processing times and weights are uniform integers on 1..10, drawn per seed.
        """,
    "ladder/rule.py": '''
        """Toy, constructive rule: shortest processing time first (SPT), the weights left aside.

        Usage: python3 -I rule.py INSTANCE.json SOLUTION.json
        """

        import json
        import sys


        def spt(p, w):
            """The jobs by processing time, ties to the lower number."""
            return sorted(range(len(p)), key=lambda j: (p[j], j))


        def main(order=spt):
            """Write the ``sequence`` that ``order(p, w)`` gives (the rule's by default) for the instance."""
            with open(sys.argv[1]) as f:
                instance = json.load(f)
            sequence = order(instance["processing_times"], instance["weights"])
            with open(sys.argv[2], "w") as f:
                json.dump({"sequence": sequence}, f)


        if __name__ == "__main__":
            main()
        ''',
    "ladder/search.py": '''
        """Toy, local search: adjacent interchanges from the SPT sequence while one lowers the objective.

        Runs after rule.py's code (spt() for the start, main() to read and write), as one program.
        """

        import time

        TIME_LIMIT_S = 10.0


        def searched_sequence(p, w):
            """SPT, then swaps of neighbours a, b with w[b] * p[a] > w[a] * p[b] until none is left or time is up."""
            deadline = time.monotonic() + 0.8 * TIME_LIMIT_S
            sequence = spt(p, w)
            improved = True
            while improved and time.monotonic() < deadline:
                improved = False
                for i in range(len(sequence) - 1):
                    a, b = sequence[i], sequence[i + 1]
                    if w[b] * p[a] > w[a] * p[b]:
                        sequence[i], sequence[i + 1] = b, a
                        improved = True
            return sequence


        if __name__ == "__main__":
            main(searched_sequence)
        ''',
}
#: The per-class property the toy must fail: it ships no dataset rows.
GUARD = "test_class_has_shipped_rows_for_both_levels[toy]"


def of_class(test: str, name: str) -> bool:
    """Whether the test id ``test`` is a case of the class ``name`` (one of its parameters)."""
    return re.search(rf"[\[-]{name}[\]-]", test) is not None


def write_toy(root: Path, package: str) -> Path:
    """The toy class folder as package ``package`` under ``root``."""
    folder = root / package
    for name, text in TOY.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def register_toy(root: Path) -> None:
    """The toy as package ``toyclass`` under ``root``, and the pytest plugin ``toyplugin`` that registers it."""
    write_toy(root, "toyclass")
    (root / "toyplugin.py").write_text(
        'from orharbor.problem_modules import PROBLEMS\n\nPROBLEMS["toy"] = "toyclass"\n', encoding="utf-8"
    )


def listed_files() -> list[str]:
    """The files of a class folder the checklist in docs/contributing.md lists: the first column of its table."""
    checklist = CONTRIBUTING.read_text(encoding="utf-8").split("## Adding a problem class", 1)[1]
    return re.findall(r"^\s*\| `([^`]+)` \|", checklist, re.MULTILINE)


def run_pytest(tmp_path: Path, *args: str, tests: str = "tests/test_contract.py") -> subprocess.CompletedProcess:
    """``tests`` (tests/test_contract.py) in a subprocess, with the toy registered by the plugin ``toyplugin``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "pytest", "-p", "toyplugin", "-p", "no:cacheprovider", tests, *args]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def per_class_outcomes(tmp_path: Path, tests: str) -> tuple[Counter, dict[str, str], subprocess.CompletedProcess]:
    """For ``tests`` with the toy registered: how many cases each test has for jobshop, the outcome of every
    case of the toy (``-k toy``), and that run."""
    collected = run_pytest(tmp_path, "--collect-only", "-q", tests=tests)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    ids = [line.split("::", 1)[1] for line in collected.stdout.splitlines() if "::" in line]
    per_class = Counter(test.split("[")[0] for test in ids if of_class(test, "jobshop"))
    assert per_class and sum(per_class.values()) == sum(of_class(test, "toy") for test in ids)
    report = tmp_path / f"report-{Path(tests).stem}.xml"
    run = run_pytest(tmp_path, "-k", "toy", f"--junitxml={report}", "-q", tests=tests)
    outcomes = {
        case.get("name"): next((child.tag for child in case), "passed")
        for case in ET.parse(report).getroot().iter("testcase")
    }
    return per_class, outcomes, run


@pytest.mark.slow
def test_a_new_class_is_tested_by_adding_its_folder(tmp_path):
    """Every per-class property runs for the toy and passes, except the shipped-rows guard, which fails."""
    register_toy(tmp_path)
    per_class, outcomes, run = per_class_outcomes(tmp_path, "tests/test_contract.py")
    assert Counter(test.split("[")[0] for test in outcomes) == per_class, run.stdout[-3000:]
    assert {test for test, outcome in outcomes.items() if outcome != "passed"} == {GUARD}, run.stdout[-3000:]
    assert outcomes[GUARD] == "failure" and run.returncode == 1


@pytest.mark.slow
def test_a_new_class_s_ladder_is_tested_by_adding_its_folder(tmp_path):
    """tests/test_ladder_programs.py takes its classes from the registry: every per-class check of the ladder
    programs runs for the toy's ladder/rule.py and ladder/search.py, and passes."""
    register_toy(tmp_path)
    per_class, outcomes, run = per_class_outcomes(tmp_path, "tests/test_ladder_programs.py")
    assert Counter(test.split("[")[0] for test in outcomes) == per_class, run.stdout[-3000:]
    assert set(outcomes.values()) == {"passed"} and run.returncode == 0, run.stdout[-3000:]


def test_the_checklist_lists_exactly_the_files_of_a_working_class(tmp_path, monkeypatch):
    """The toy's folder is exactly the files docs/contributing.md lists, and the registry takes it as a class:
    the folder's PROBLEM, built from its files' members."""
    assert sorted(listed_files()) == sorted(TOY)
    write_toy(tmp_path, "toy_listed")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(problem_modules.PROBLEMS, "toy", "toy_listed")
    toy = problem_modules.get("toy")
    assert toy is importlib.import_module("toy_listed").PROBLEM and isinstance(toy, ProblemClass)
    assert toy.evaluate is importlib.import_module("toy_listed.verify").evaluate
    instance = toy.generate(0, toy.SIZES[0])
    assert toy.evaluate(instance, toy.reference(instance, time_limit_s=1.0, workers=1)[0]) <= toy.evaluate(
        instance, toy.baseline(instance)
    )


@pytest.mark.parametrize("file", listed_files())
def test_a_folder_without_a_listed_file_is_refused_naming_it(tmp_path, monkeypatch, file):
    """Each file the checklist lists is needed: without it the registry refuses the folder with an error naming it."""
    package = "toy_without_" + re.sub(r"\W", "_", file)
    (write_toy(tmp_path, package) / file).unlink()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(problem_modules.PROBLEMS, "toy", package)
    with pytest.raises(problem_modules.IncompleteProblem, match=rf"\({package}\): no {re.escape(file)} \("):
        problem_modules.get("toy")


def edit(folder: Path, name: str, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in the folder's file ``name``."""
    text = (folder / name).read_text(encoding="utf-8")
    assert old in text
    (folder / name).write_text(text.replace(old, new), encoding="utf-8")


MISSING = [
    (
        "toy_no_write",
        lambda f: (f / "formats.py").write_text("FORMATS = ('jobs',)\n\ndef read(text):\n    pass\n"),
        r"problem class 'toy' \(toy_no_write\): formats\.py has no 'write'",
    ),
    (
        "toy_no_rules",
        lambda f: (f / "rules.py").unlink(),
        r"\(toy_no_rules\): no rules\.py \(it holds validate_instance\)",
    ),
    ("toy_no_statement", lambda f: (f / "statement.md").unlink(), r"\(toy_no_statement\): no statement\.md"),
    (
        "toy_misnamed",
        lambda f: (f / "__init__.py").write_text("NAME = 'other'\nTITLE = OBJECTIVE = 'x'\n"),
        r"NAME is 'other', but the class is registered as 'toy'",
    ),
    (
        "toy_no_problem",
        lambda f: edit(f, "__init__.py", "PROBLEM = Problem(", "problem = Problem("),
        r"\(toy_no_problem\): __init__\.py builds no PROBLEM",
    ),
    (
        "toy_wired_elsewhere",
        lambda f: edit(f, "__init__.py", "evaluate=evaluate", "evaluate=baseline"),
        r"\(toy_wired_elsewhere\): PROBLEM\.evaluate is not the 'evaluate' of verify\.py",
    ),
]


@pytest.mark.parametrize(("package", "damage", "message"), MISSING, ids=[case[0] for case in MISSING])
def test_a_folder_missing_a_piece_is_refused_naming_it(tmp_path, monkeypatch, package, damage, message):
    """The registry checks the folder's PROBLEM against the contract, and names the missing or misplaced piece."""
    damage(write_toy(tmp_path, package))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(problem_modules.PROBLEMS, "toy", package)
    with pytest.raises(problem_modules.IncompleteProblem, match=message):
        problem_modules.get("toy")
