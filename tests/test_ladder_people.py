"""The calibration-ladder policies of the people classes (rostering, timetabling).

Each class ships two level-2 programs in its ``ladder/`` folder: ``rule.py``, a classic
constructive rule, and ``search.py``, a local search started from that rule that stops at the
budget of its ``TIME_LIMIT_S = ...`` line; the search's program is rule.py's code followed by
search.py. They are run here exactly as a task's verifier runs a ``solve.py``, with the search's
budget set small (tests/ladder_runs.py): the answers are feasible, the rule beats the naive
baseline at the benchmark's tier sizes, and the search never ends worse than the rule it starts
from. Feasibility itself needs care in both classes, so the rules' fallbacks (an exhaustive line
for a rostering contract the unlimited shift types cannot meet, a repair by unassignment when a
timetabling course has no period left) are exercised on instances that need them.
"""

from __future__ import annotations

import ast
import importlib.util
from collections import Counter

import pytest

from orharbor import problem_modules
from orharbor.benchmark.ladder import program
from orharbor.problem_modules.timetabling.generator import build

from ladder_runs import (POLICIES, check_imports, check_search_starts_from_the_rule, check_smallest_size,
                         check_tier_sizes, check_time_limit_line, run)

#: The benchmark's tier sizes per class.
TIERS = {"rostering": ("d28e30s4", "d84e40s5"), "timetabling": ("c60", "c130")}
#: The search's budget in these tests, and the seed of the one instance per tier size.
SEARCH_TIME_LIMIT_S = 1.0
TIER_SEED = 3


def load(name: str, policy: str, tmp_path):
    """The program as a module (for the fallback tests, which look inside the rule)."""
    path = tmp_path / f"{name}_{policy}.py"
    path.write_text(program(name, policy, SEARCH_TIME_LIMIT_S))
    spec = importlib.util.spec_from_file_location(f"ladder_{name}_{policy}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", TIERS)
@pytest.mark.parametrize("policy", POLICIES)
def test_imports_only_stdlib_numpy_scipy(name, policy):
    check_imports(name, policy)


@pytest.mark.parametrize("name", TIERS)
def test_search_has_one_time_limit_line(name):
    check_time_limit_line(name)


@pytest.mark.parametrize("name", TIERS)
def test_search_starts_from_the_rule(name):
    """The search program holds the rule's code verbatim, from its imports to its entry point (rule.py, then
    search.py, in one file), so the search starts from the rule's very answer."""
    check_search_starts_from_the_rule(name)
    rule = program(name, "rule", SEARCH_TIME_LIMIT_S)
    body = ast.parse(rule).body
    first = max(node.end_lineno for node in body if isinstance(node, (ast.Import, ast.ImportFrom)))
    last = next(node.lineno for node in body if isinstance(node, ast.FunctionDef) and node.name in ("solve", "main"))
    shared = "".join(rule.splitlines(keepends=True)[first:last - 1]).strip()
    assert len(shared.splitlines()) > 100 and shared in program(name, "search", SEARCH_TIME_LIMIT_S)


@pytest.mark.parametrize("name", TIERS)
def test_smallest_size(name, tmp_path):
    check_smallest_size(name, tmp_path, SEARCH_TIME_LIMIT_S)


@pytest.mark.slow
@pytest.mark.parametrize("name", TIERS)
def test_tier_sizes(name, tmp_path):
    check_tier_sizes(name, TIERS[name], TIER_SEED, tmp_path, SEARCH_TIME_LIMIT_S)


def test_rostering_rule_falls_back_to_an_exhaustive_line(tmp_path):
    """d14e14s2 seed 64: one contract's minutes cannot be met by the unlimited shift types alone (the
    generator widened it to its witness line), so the rule's table rejects it and the exhaustive search
    gives that employee a line; the roster is still feasible, and the search keeps it so."""
    m = problem_modules.get("rostering")
    instance = m.generate(64, "d14e14s2")
    rule = load("rostering", "rule", tmp_path)
    contracts = [rule.Contract(p, instance["shifts"], instance["horizon"]) for p in instance["staff"]]
    assert any(not c.completable(0, rule.BEGIN, 0, 0) for c in contracts)
    search = run("rostering", "search", instance, tmp_path, SEARCH_TIME_LIMIT_S)
    assert search <= run("rostering", "rule", instance, tmp_path, SEARCH_TIME_LIMIT_S)


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
    search = run("timetabling", "search", instance, tmp_path, SEARCH_TIME_LIMIT_S)
    assert search <= run("timetabling", "rule", instance, tmp_path, SEARCH_TIME_LIMIT_S)
