"""The calibration-ladder policies of the scheduling classes (jobshop, rcpsp, wtardiness).

Each class ships two level-2 programs in its ``ladder/`` folder: ``rule.py``, a classic
constructive rule, and ``search.py``, a local search started from that rule that stops at the
budget of its ``TIME_LIMIT_S = ...`` line. They are run here exactly as a task's verifier runs a
``solve.py`` (``python -I solve.py INSTANCE.json SOLUTION.json`` in an empty working directory),
with the search's budget rewritten small. Nothing asserted depends on how many iterations the
search manages: only feasibility, the rule beating the naive baseline at the benchmark's tier
sizes, and the search never ending worse than the rule it starts from.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from importlib import resources

import pytest

from orharbor import problem_modules

#: The benchmark's tier sizes per class (jobshop also Taillard's largest, 100x20).
TIERS = {
    "jobshop": ("15x15", "30x20", "50x20", "100x20"),
    "rcpsp": ("j30", "j60", "j120"),
    "wtardiness": ("n40", "n100"),
}
POLICIES = ("rule", "search")
SMALL_SEEDS = (0, 1, 2)
#: The search's budget in these tests, and the seed of the one instance per tier size.
SEARCH_TIME_LIMIT_S = 1.0
TIER_SEED = 1000
TIME_LIMIT_LINE = re.compile(r"^TIME_LIMIT_S = \d+\.\d+$", re.M)


def source(name: str, policy: str) -> str:
    return resources.files(problem_modules.get(name).package).joinpath("ladder", f"{policy}.py").read_text()


def run(name: str, policy: str, instance: dict, tmp_path) -> int:
    """The objective of the program's answer on ``instance``, run as a level-2 solve.py (evaluate checks it)."""
    text = source(name, policy)
    if policy == "search":
        text = TIME_LIMIT_LINE.sub(f"TIME_LIMIT_S = {SEARCH_TIME_LIMIT_S}", text)
    folder = tmp_path / f"{policy}-{instance['name']}"
    folder.mkdir()
    (folder / "solve.py").write_text(text)
    (folder / "instance.json").write_text(json.dumps(instance))
    done = subprocess.run([sys.executable, "-I", "solve.py", "instance.json", "solution.json"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    solution = json.loads((folder / "solution.json").read_text())
    return problem_modules.get(name).evaluate(instance, solution)


@pytest.mark.parametrize("name", TIERS)
@pytest.mark.parametrize("policy", POLICIES)
def test_imports_only_stdlib_numpy_scipy(name, policy):
    """A level-2 program sees the standard library, numpy and scipy only: nothing else is imported."""
    tree = ast.parse(source(name, policy))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import at line {node.lineno}"
            roots = [node.module.split(".")[0]]
        else:
            continue
        for root in roots:
            assert root in sys.stdlib_module_names or root in ("numpy", "scipy"), f"{root} (line {node.lineno})"


@pytest.mark.parametrize("name", TIERS)
def test_search_has_one_time_limit_line(name):
    """The ladder sets the budget by rewriting exactly one ``TIME_LIMIT_S = <float>`` line."""
    assert len(TIME_LIMIT_LINE.findall(source(name, "search"))) == 1
    assert "TIME_LIMIT_S" not in source(name, "rule")


@pytest.mark.parametrize("name", TIERS)
def test_smallest_size(name, tmp_path):
    """At the smoke size: both answers feasible, the rule deterministic, the search no worse than the rule."""
    m = problem_modules.get(name)
    for seed in SMALL_SEEDS:
        instance = m.generate(seed, m.SIZES[0])
        rule = run(name, "rule", instance, tmp_path)
        instance_again = dict(instance, name=instance["name"] + "-again")
        assert run(name, "rule", instance_again, tmp_path) == rule
        assert run(name, "search", instance, tmp_path) <= rule


@pytest.mark.slow
@pytest.mark.parametrize("name", TIERS)
def test_tier_sizes(name, tmp_path):
    """One instance per tier size: feasible answers, the rule beats naive overall, search <= rule each time."""
    m = problem_modules.get(name)
    naive_total = rule_total = 0
    for size in TIERS[name]:
        instance = m.generate(TIER_SEED, size)
        rule = run(name, "rule", instance, tmp_path)
        assert run(name, "search", instance, tmp_path) <= rule, size
        naive_total += m.evaluate(instance, m.baseline(instance))
        rule_total += rule
    assert rule_total < naive_total
