"""The calibration ladder's programs run as a task's verifier runs a solve.py: the checks of tests/test_ladder_*.py.

A module of its own, not conftest.py (see quick_retail.py). Every program is the text
:func:`orharbor.benchmark.ladder.program` gives, the very text a task runs: for ``search``, rule.py's code
followed by search.py, which is never run alone. It runs as ``python -I solve.py instance.json
solution.json`` in an empty folder. Nothing checked depends on how many iterations a search manages in its
budget: only feasibility, the rule's determinism, the search never ending worse than the rule it starts
from, and the rule beating the naive baseline at the benchmark's tier sizes.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

from orharbor import problem_modules
from orharbor.benchmark.ladder import program

POLICIES = ("rule", "search")
#: The line that sets a search's budget.
TIME_LIMIT_LINE = re.compile(r"^TIME_LIMIT_S = \d+\.\d+$", re.M)


def run(name: str, policy: str, instance: dict, tmp_path: Path, time_limit_s: float):
    """The objective of the program's answer on ``instance`` (evaluate raises Infeasible if it is not feasible)."""
    folder = tmp_path / f"{policy}-{instance['name']}"
    folder.mkdir()
    (folder / "solve.py").write_text(program(name, policy, time_limit_s))
    (folder / "instance.json").write_text(json.dumps(instance))
    done = subprocess.run([sys.executable, "-I", "solve.py", "instance.json", "solution.json"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    solution = json.loads((folder / "solution.json").read_text())
    return problem_modules.get(name).evaluate(instance, solution)


def check_imports(name: str, policy: str) -> None:
    """A level-2 program sees the standard library, numpy and scipy only: nothing else is imported."""
    for node in ast.walk(ast.parse(program(name, policy, 1.0))):
        if isinstance(node, ast.Import):
            roots = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{name} {policy}: relative import at line {node.lineno}"
            roots = [node.module.split(".")[0]]
        else:
            continue
        for root in roots:
            assert root in sys.stdlib_module_names or root in ("numpy", "scipy"), \
                f"{name} {policy} imports {root} (line {node.lineno})"


def check_time_limit_line(name: str) -> None:
    """The ladder sets the budget by rewriting exactly one ``TIME_LIMIT_S = <float>`` line; the rule has none."""
    assert TIME_LIMIT_LINE.findall(program(name, "search", 2.5)) == ["TIME_LIMIT_S = 2.5"]
    assert "TIME_LIMIT_S" not in program(name, "rule", 2.5)


def check_search_starts_from_the_rule(name: str) -> None:
    """The search program is rule.py up to its entry point, then search.py, which redefines none of the rule's
    names: the rule's functions run in it as in rule.py, so the search starts from the rule's very answer."""
    rule, search = program(name, "rule", 2.5), program(name, "search", 2.5)
    head = rule[:rule.rindex('\nif __name__ == "__main__":') + 1]
    added = resources.files(problem_modules.get(name).package).joinpath("ladder", "search.py").read_text()
    assert search == head + TIME_LIMIT_LINE.sub("TIME_LIMIT_S = 2.5", added)
    redefined = _top_level_names(head) & _top_level_names(added)
    assert not redefined, f"{name} search.py redefines the rule's {sorted(redefined)}"


def _top_level_names(source: str) -> set[str]:
    """The names a module's own statements bind: functions, classes, imports, assignments."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def check_smallest_size(name: str, tmp_path: Path, time_limit_s: float, seeds=(0, 1, 2)) -> None:
    """At the smoke size: both answers feasible, the rule deterministic, the search no worse than the rule."""
    m = problem_modules.get(name)
    for seed in seeds:
        instance = m.generate(seed, m.SIZES[0])
        rule = run(name, "rule", instance, tmp_path, time_limit_s)
        instance_again = dict(instance, name=instance["name"] + "-again")
        assert run(name, "rule", instance_again, tmp_path, time_limit_s) == rule, f"{name} seed {seed}"
        search = run(name, "search", instance, tmp_path, time_limit_s)
        assert search <= rule, f"{name} seed {seed}: search {search} > rule {rule}"


def check_tier_sizes(name: str, sizes, seed: int, tmp_path: Path, time_limit_s: float) -> None:
    """One instance per tier size: feasible answers, search <= rule each time, the rule beats naive overall."""
    m = problem_modules.get(name)
    naive_total = rule_total = 0
    for size in sizes:
        instance = m.generate(seed, size)
        rule = run(name, "rule", instance, tmp_path, time_limit_s)
        search = run(name, "search", instance, tmp_path, time_limit_s)
        assert search <= rule, f"{name} {size}: search {search} > rule {rule}"
        naive_total += m.evaluate(instance, m.baseline(instance))
        rule_total += rule
    assert rule_total < naive_total, f"{name}: rule {rule_total} >= naive {naive_total} over {sizes}"
