"""The calibration-ladder policies of cvrp and vrptw: ladder/rule.py and ladder/search.py.

Each is a standalone level-2 ``solve.py``, run here as a task runs it
(``python -I solve.py instance.json solution.json`` in an empty folder), with
search.py's ``TIME_LIMIT_S`` line rewritten to a short budget. No assertion
depends on how many iterations the search gets in that budget: it must write a
feasible answer no longer than the rule's, whatever the machine's load.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orharbor import problem_modules

CLASSES = ("cvrp", "vrptw")
POLICIES = ("rule", "search")
#: The benchmark's tier sizes per class.
TIERS = {"cvrp": ("n100", "n200", "n400"), "vrptw": ("n100", "n200")}
TIME_LIMIT_LINE = re.compile(r"^TIME_LIMIT_S = [0-9]+\.[0-9]+$", re.M)


def program(name: str, policy: str) -> Path:
    return Path(problem_modules.__file__).parent / name / "ladder" / f"{policy}.py"


def run(name: str, policy: str, instance: dict, tmp_path: Path, time_limit_s: float = 0.0):
    """The objective of the policy's answer on ``instance`` (evaluate raises Infeasible if it is not feasible)."""
    source = program(name, policy).read_text()
    if policy == "search":
        source = TIME_LIMIT_LINE.sub(f"TIME_LIMIT_S = {time_limit_s}", source)
    folder = tmp_path / f"{policy}-{instance['name']}"
    folder.mkdir()
    (folder / "solve.py").write_text(source)
    (folder / "instance.json").write_text(json.dumps(instance))
    done = subprocess.run([sys.executable, "-I", "solve.py", "instance.json", "solution.json"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    solution = json.loads((folder / "solution.json").read_text())
    return problem_modules.get(name).evaluate(instance, solution)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", CLASSES)
def test_imports_only_stdlib_numpy_scipy(name, policy):
    tree = ast.parse(program(name, policy).read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            modules.add(node.module.split(".")[0])
    outside = modules - set(sys.stdlib_module_names) - {"numpy", "scipy"}
    assert not outside, f"{policy}.py imports {sorted(outside)}"


@pytest.mark.parametrize("name", CLASSES)
def test_search_has_one_time_limit_line(name):
    assert len(TIME_LIMIT_LINE.findall(program(name, "search").read_text())) == 1
    assert not TIME_LIMIT_LINE.search(program(name, "rule").read_text())


@pytest.mark.parametrize("name", CLASSES)
def test_smallest_size(name, tmp_path):
    module = problem_modules.get(name)
    for seed in range(3):
        instance = module.generate(seed, module.SIZES[0])
        rule = run(name, "rule", instance, tmp_path)
        assert run(name, "search", instance, tmp_path, 0.5) <= rule


@pytest.mark.slow
@pytest.mark.parametrize("name", CLASSES)
def test_tier_sizes(name, tmp_path):
    module = problem_modules.get(name)
    naive, rules = [], []
    for size in TIERS[name]:
        instance = module.generate(0, size)
        naive.append(module.evaluate(instance, module.baseline(instance)))
        rules.append(run(name, "rule", instance, tmp_path))
        assert run(name, "search", instance, tmp_path, 1.0) <= rules[-1], size
    assert sum(rules) < sum(naive)
