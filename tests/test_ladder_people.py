"""The calibration-ladder policies of the people classes (rostering, timetabling).

Each class ships two level-2 programs in its ``ladder/`` folder: ``rule.py``, a classic
constructive rule, and ``search.py``, a local search started from that rule that stops at the
budget of its ``TIME_LIMIT_S = ...`` line. They are run here exactly as a task's verifier runs a
``solve.py`` (``python -I solve.py INSTANCE.json SOLUTION.json`` in an empty working directory),
with the search's budget rewritten small. Nothing asserted depends on how many moves the search
manages: only feasibility, the rule beating the naive baseline at the benchmark's tier sizes, and
the search never ending worse than the rule it starts from. Feasibility itself needs care in both
classes, so the rules' fallbacks (an exhaustive line for a rostering contract the unlimited shift
types cannot meet, a repair by unassignment when a timetabling course has no period left) are
exercised on instances that need them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from importlib import resources

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.timetabling.generator import build

#: The benchmark's tier sizes per class.
TIERS = {"rostering": ("d28e30s4", "d84e40s5"), "timetabling": ("c60", "c130")}
POLICIES = ("rule", "search")
SMALL_SEEDS = (0, 1, 2)
#: The search's budget in these tests, and the seed of the one instance per tier size.
SEARCH_TIME_LIMIT_S = 1.0
TIER_SEED = 3
TIME_LIMIT_LINE = re.compile(r"^TIME_LIMIT_S = \d+\.\d+$", re.M)


def source(name: str, policy: str) -> str:
    return resources.files(problem_modules.get(name).package).joinpath("ladder", f"{policy}.py").read_text()


def load(name: str, policy: str, tmp_path):
    """The program as a module (for the fallback tests, which look inside the rule)."""
    path = tmp_path / f"{name}_{policy}.py"
    path.write_text(source(name, policy))
    spec = importlib.util.spec_from_file_location(f"ladder_{name}_{policy}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    for node in ast.walk(ast.parse(source(name, policy))):
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
def test_search_starts_from_the_rule(name):
    """search.py holds the rule's code verbatim, from its imports to its entry point (each program is one
    self-contained file), so the search starts from the rule's very answer."""
    rule = source(name, "rule")
    body = ast.parse(rule).body
    first = max(node.end_lineno for node in body if isinstance(node, (ast.Import, ast.ImportFrom)))
    last = next(node.lineno for node in body if isinstance(node, ast.FunctionDef) and node.name in ("solve", "main"))
    shared = "".join(rule.splitlines(keepends=True)[first:last - 1]).strip()
    assert len(shared.splitlines()) > 100 and shared in source(name, "search")


@pytest.mark.parametrize("name", TIERS)
def test_smallest_size(name, tmp_path):
    """At the smoke size: both answers feasible, the rule deterministic, the search no worse than the rule."""
    m = problem_modules.get(name)
    for seed in SMALL_SEEDS:
        instance = m.generate(seed, m.SIZES[0])
        rule = run(name, "rule", instance, tmp_path)
        assert run(name, "rule", dict(instance, name=instance["name"] + "-again"), tmp_path) == rule
        assert run(name, "search", instance, tmp_path) <= rule


@pytest.mark.slow
@pytest.mark.parametrize("name", TIERS)
def test_tier_sizes(name, tmp_path):
    """One instance per tier size: feasible answers, the rule beats naive on average, search <= rule each time."""
    m = problem_modules.get(name)
    naive_total = rule_total = 0
    for size in TIERS[name]:
        instance = m.generate(TIER_SEED, size)
        rule = run(name, "rule", instance, tmp_path)
        assert run(name, "search", instance, tmp_path) <= rule, size
        naive_total += m.evaluate(instance, m.baseline(instance))
        rule_total += rule
    assert rule_total < naive_total


def test_rostering_rule_falls_back_to_an_exhaustive_line(tmp_path):
    """d14e14s2 seed 64: one contract's minutes cannot be met by the unlimited shift types alone (the
    generator widened it to its witness line), so the rule's table rejects it and the exhaustive search
    gives that employee a line; the roster is still feasible, and the search keeps it so."""
    m = problem_modules.get("rostering")
    instance = m.generate(64, "d14e14s2")
    rule = load("rostering", "rule", tmp_path)
    contracts = [rule.Contract(p, instance["shifts"], instance["horizon"]) for p in instance["staff"]]
    assert any(not c.completable(0, rule.BEGIN, 0, 0) for c in contracts)
    assert run("rostering", "search", instance, tmp_path) <= run("rostering", "rule", instance, tmp_path)


@pytest.mark.parametrize("seed", (7, 11))
def test_timetabling_rule_repairs_when_stuck(seed, tmp_path):
    """c30 with only as many rooms as the generator's hidden timetable needs in its busiest period: the
    most-constrained-first order runs out of periods for some course, and the repair by unassignment
    still completes a feasible timetable; the search keeps it feasible."""
    instance, hidden = build(seed, "c30")
    busiest = max(Counter((day, period) for _, _, day, period in hidden["assignments"]).values())
    instance = dict(instance, rooms=instance["rooms"][:busiest], name=f"{instance['name']}-tight")
    in_period = Counter()
    for lecture in hidden["assignments"]:  # the hidden timetable with the rooms left: still feasible
        lecture[1] = instance["rooms"][in_period[lecture[2], lecture[3]]]["id"]
        in_period[lecture[2], lecture[3]] += 1
    problem_modules.get("timetabling").evaluate(instance, hidden)
    rule = load("timetabling", "rule", tmp_path)
    repairs = []
    original = rule.blockers
    rule.blockers = lambda *args: repairs.append(args) or original(*args)
    problem_modules.get("timetabling").evaluate(instance, rule.construct(instance).solution())
    assert repairs, "the rule never needed its repair here: pick a tighter instance"
    assert run("timetabling", "search", instance, tmp_path) <= run("timetabling", "rule", instance, tmp_path)
