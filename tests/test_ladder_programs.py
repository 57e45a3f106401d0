"""The calibration ladder's programs, for every problem class: ladder/rule.py, and ladder/search.py after it.

Each class ships two level-2 programs in its ``ladder/`` folder: ``rule.py``, a classic constructive rule,
and ``search.py``, a local search started from that rule that stops at the budget of its
``TIME_LIMIT_S = ...`` line. Every program is the text :func:`orharbor.problem_modules.ladder_programs.program` gives, the
very text a task runs: first the shared files rule.py names (``# ladder: shared NAME``: code written once
in ``problem_modules/ladder_shared/`` for several classes), then rule.py, or for ``search`` rule.py's code
followed by search.py, which is never run alone. It runs here exactly as a task's verifier runs a
``solve.py``: ``python -I solve.py instance.json solution.json`` in an empty folder, with the search's
budget set small. Nothing checked depends on how many
iterations a search manages in its budget: only feasibility, the rule's determinism, the search never
ending worse than the rule it starts from, and the rule beating the naive baseline at the benchmark's tier
sizes.

The checks common to every class are written once and run over :data:`LADDERS`, every registered class.
Feasibility itself needs care in the people classes, so the rules' fallbacks there (an exhaustive line for a
rostering contract the unlimited shift types cannot meet, a repair by unassignment when a timetabling course
has no period left) are exercised on instances that need them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.benchmark.ladder import SHARED_FOLDER, SHARED_LINE, LadderError, program
from orharbor.problem_modules.timetabling.generator import build


@dataclass(frozen=True)
class Ladder:
    """What the tests run of one class's ladder."""

    #: The benchmark's tier sizes (one instance each in test_tier_sizes).
    tiers: tuple[str, ...]
    #: The seed of the one instance per tier size.
    tier_seed: int
    #: The search's budget at the smallest size (test_smallest_size) and at the tier sizes.
    smoke_budget_s: float = 1.0
    tier_budget_s: float = 1.0


#: The tests' settings of a class's ladder where the default (below) does not fit.
SETTINGS = {
    # jobshop's tiers include Taillard's largest, 100x20.
    "jobshop": Ladder(("15x15", "30x20", "50x20", "100x20"), tier_seed=1000),
    "rcpsp": Ladder(("j30", "j60", "j120"), tier_seed=1000),
    "wtardiness": Ladder(("n40", "n100"), tier_seed=1000),
    "cvrp": Ladder(("n100", "n200", "n400"), tier_seed=0, smoke_budget_s=0.5),
    "vrptw": Ladder(("n100", "n200"), tier_seed=0, smoke_budget_s=0.5),
    "rostering": Ladder(("d28e30s4", "d84e40s5"), tier_seed=3),
    "timetabling": Ladder(("c60", "c130"), tier_seed=3),
}


def _ladder(name: str) -> Ladder:
    """The class's line in SETTINGS; without one, its generator's sizes after the smallest, at seed 0."""
    return SETTINGS.get(name) or Ladder(tuple(problem_modules.get(name).SIZES[1:]), tier_seed=0)


#: Every registered class's ladder: a class folder holds ladder/rule.py and ladder/search.py (the registry
#: refuses one without them), so a new class's programs are tested as soon as it is registered.
LADDERS = {name: _ladder(name) for name in problem_modules.names()}
POLICIES = ("rule", "search")
#: The seeds of the instances at the smallest size.
SMOKE_SEEDS = (0, 1, 2)
#: The line that sets a search's budget.
TIME_LIMIT_LINE = re.compile(r"^TIME_LIMIT_S = \d+\.\d+$", re.M)


def run(name: str, policy: str, instance: dict, tmp_path: Path, time_limit_s: float):
    """The objective of the program's answer on ``instance`` (evaluate raises Infeasible if it is not feasible)."""
    folder = tmp_path / f"{policy}-{instance['name']}"
    folder.mkdir()
    (folder / "solve.py").write_text(program(name, policy, time_limit_s))
    (folder / "instance.json").write_text(json.dumps(instance))
    done = subprocess.run(
        [sys.executable, "-I", "solve.py", "instance.json", "solution.json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    solution = json.loads((folder / "solution.json").read_text())
    return problem_modules.get(name).evaluate(instance, solution)


def load(name: str, policy: str, tmp_path: Path):
    """The program as a module (for the fallback tests, which look inside the rule)."""
    path = tmp_path / f"{name}_{policy}.py"
    path.write_text(program(name, policy, LADDERS[name].smoke_budget_s))
    spec = importlib.util.spec_from_file_location(f"ladder_{name}_{policy}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", LADDERS)
def test_imports_only_stdlib_numpy_scipy(name, policy):
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
            assert root in sys.stdlib_module_names or root in ("numpy", "scipy"), (
                f"{name} {policy} imports {root} (line {node.lineno})"
            )


@pytest.mark.parametrize("name", LADDERS)
def test_search_has_one_time_limit_line(name):
    """The ladder sets the budget by rewriting exactly one ``TIME_LIMIT_S = <float>`` line; the rule has none."""
    assert TIME_LIMIT_LINE.findall(program(name, "search", 2.5)) == ["TIME_LIMIT_S = 2.5"]
    assert "TIME_LIMIT_S" not in program(name, "rule", 2.5)


def _ladder_text(name: str, policy: str) -> str:
    return resources.files(problem_modules.PROBLEMS[name]).joinpath("ladder", f"{policy}.py").read_text()


def _shared_text(shared: str) -> str:
    return resources.files(problem_modules).joinpath(SHARED_FOLDER, f"{shared}.py").read_text()


@pytest.mark.parametrize("name", LADDERS)
def test_search_starts_from_the_rule(name):
    """The rule program is the shared files rule.py names, then rule.py; the search program is the same
    shared files, rule.py up to its entry point, then search.py. No part rebinds a name of a part before it:
    the rule's functions run in the search as in the rule, so the search starts from the rule's very answer."""
    rule, added = _ladder_text(name, "rule"), _ladder_text(name, "search")
    shared = [_shared_text(shared) for shared in SHARED_LINE.findall(rule)]
    head = rule[: rule.rindex('\nif __name__ == "__main__":') + 1]
    assert program(name, "rule", 2.5) == "".join(text + "\n\n" for text in shared) + rule
    assert program(name, "search", 2.5) == "".join(text + "\n\n" for text in shared) + head + TIME_LIMIT_LINE.sub(
        "TIME_LIMIT_S = 2.5", added
    )
    bound = set()
    for part, text in [
        *((f"shared file {i}", text) for i, text in enumerate(shared)),
        ("rule.py", head),
        ("search.py", added),
    ]:
        redefined = bound & _top_level_names(text)
        assert not redefined, f"{name} {part} redefines {sorted(redefined)}"
        bound |= _top_level_names(text)


def test_the_routing_classes_share_one_file():
    """cvrp and vrptw name ladder_shared/routing.py: both their programs begin with it, so the answer file and
    the local search's frame are written once for the two."""
    routing = _shared_text("routing") + "\n\n"
    for name in ("cvrp", "vrptw"):
        assert SHARED_LINE.findall(_ladder_text(name, "rule")) == ["routing"]
        for policy in POLICIES:
            assert program(name, policy, 2.5).startswith(routing), f"{name} {policy}"


def test_the_ladders_are_the_registered_classes():
    """LADDERS is the registry's classes, each with its own ladder/ programs; SETTINGS names no other class."""
    assert list(LADDERS) == problem_modules.names() and set(SETTINGS) <= set(LADDERS)
    for name in LADDERS:
        for policy in POLICIES:
            assert resources.files(problem_modules.PROBLEMS[name]).joinpath("ladder", f"{policy}.py").is_file()


def test_jobshop_and_wtardiness_share_one_iterated_local_search():
    """jobshop and wtardiness name ladder_shared/local_search.py: both their programs begin with it, so the iterated
    local search's loop is written once for the two, and each search.py gives it only its descent and kick."""
    loop = _shared_text("local_search") + "\n\n"
    for name in ("jobshop", "wtardiness"):
        assert SHARED_LINE.findall(_ladder_text(name, "rule")) == ["local_search"]
        for policy in POLICIES:
            assert program(name, policy, 2.5).startswith(loop), f"{name} {policy}"
        assert "iterated_local_search(" in _ladder_text(name, "search")
        assert "def iterated_local_search" not in _ladder_text(name, "search")


@pytest.fixture
def made_up_class(tmp_path, monkeypatch):
    """A class ``madeup`` whose ladder files the test writes: ``made_up_class(rule, search)``."""
    package = tmp_path / "madeup_ladder_class"
    (package / "ladder").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(problem_modules.PROBLEMS, "madeup", package.name)

    def write(rule: str, search: str = "TIME_LIMIT_S = 1.0\n") -> None:
        (package / "ladder" / "rule.py").write_text(rule)
        (package / "ladder" / "search.py").write_text(search)

    return write


def test_a_shared_file_comes_first_and_must_exist(made_up_class, tmp_path):
    """A rule.py that opts into a shared file gets it first in both programs, and the program runs standalone;
    an unknown shared name, a ``# ladder:`` line of another form, or one in search.py is a LadderError."""
    body = (
        "import sys\n\n# ladder: shared routing\n\n\ndef nothing(instance):\n    return []\n\n\n"
        'if __name__ == "__main__":\n    main(sys.argv[1], sys.argv[2], nothing)\n'
    )
    made_up_class(body)
    routing = _shared_text("routing") + "\n\n"
    assert program("madeup", "rule", 1.0) == routing + body
    assert program("madeup", "search", 2.0) == routing + body[: body.index("if __name__")] + "TIME_LIMIT_S = 2.0\n"
    (tmp_path / "solve.py").write_text(program("madeup", "rule", 1.0))
    (tmp_path / "instance.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-I", "solve.py", "instance.json", "solution.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "solution.json").read_text()) == {"routes": []}
    made_up_class(body.replace("shared routing", "shared nosuch"))
    with pytest.raises(LadderError, match="unknown shared file 'nosuch'.*routing"):
        program("madeup", "rule", 1.0)
    made_up_class(body.replace("shared routing", "shared ../routing"))
    with pytest.raises(LadderError, match="is not '# ladder: shared NAME'"):
        program("madeup", "rule", 1.0)
    made_up_class(body, "# ladder: shared routing\nTIME_LIMIT_S = 1.0\n")
    with pytest.raises(LadderError, match="search.py names shared files"):
        program("madeup", "search", 1.0)


@pytest.mark.parametrize("name", ("rostering", "timetabling"))
def test_search_holds_the_rules_long_body_verbatim(name):
    """The people classes' rules are long: the search program holds the rule's code verbatim, from its imports
    to its entry point (rule.py, then search.py, in one file), over a hundred lines of it."""
    budget_s = LADDERS[name].smoke_budget_s
    rule = program(name, "rule", budget_s)
    body = ast.parse(rule).body
    first = max(node.end_lineno for node in body if isinstance(node, (ast.Import, ast.ImportFrom)))
    last = next(node.lineno for node in body if isinstance(node, ast.FunctionDef) and node.name in ("solve", "main"))
    shared = "".join(rule.splitlines(keepends=True)[first : last - 1]).strip()
    assert len(shared.splitlines()) > 100 and shared in program(name, "search", budget_s)


@pytest.mark.parametrize("name", LADDERS)
@pytest.mark.slow
def test_smallest_size(name, tmp_path):
    """At the smoke size: both answers feasible, the rule deterministic, the search no worse than the rule."""
    m, budget_s = problem_modules.get(name), LADDERS[name].smoke_budget_s
    for seed in SMOKE_SEEDS:
        instance = m.generate(seed, m.SIZES[0])
        rule = run(name, "rule", instance, tmp_path, budget_s)
        instance_again = dict(instance, name=instance["name"] + "-again")
        assert run(name, "rule", instance_again, tmp_path, budget_s) == rule, f"{name} seed {seed}"
        search = run(name, "search", instance, tmp_path, budget_s)
        assert search <= rule, f"{name} seed {seed}: search {search} > rule {rule}"


@pytest.mark.slow
@pytest.mark.parametrize("name", LADDERS)
def test_tier_sizes(name, tmp_path):
    """One instance per tier size: feasible answers, search <= rule each time, the rule beats naive overall."""
    m, ladder = problem_modules.get(name), LADDERS[name]
    naive_total = rule_total = 0
    for size in ladder.tiers:
        instance = m.generate(ladder.tier_seed, size)
        rule = run(name, "rule", instance, tmp_path, ladder.tier_budget_s)
        search = run(name, "search", instance, tmp_path, ladder.tier_budget_s)
        assert search <= rule, f"{name} {size}: search {search} > rule {rule}"
        naive_total += m.evaluate(instance, m.baseline(instance))
        rule_total += rule
    assert rule_total < naive_total, f"{name}: rule {rule_total} >= naive {naive_total} over {ladder.tiers}"


def test_rostering_rule_falls_back_to_an_exhaustive_line(tmp_path):
    """d14e14s2 seed 64: one contract's minutes cannot be met by the unlimited shift types alone (the
    generator widened it to its witness line), so the rule's table rejects it and the exhaustive search
    gives that employee a line; the roster is still feasible, and the search keeps it so."""
    m, budget_s = problem_modules.get("rostering"), LADDERS["rostering"].smoke_budget_s
    instance = m.generate(64, "d14e14s2")
    rule = load("rostering", "rule", tmp_path)
    contracts = [rule.Contract(p, instance["shifts"], instance["horizon"]) for p in instance["staff"]]
    assert any(not c.completable(0, rule.BEGIN, 0, 0) for c in contracts)
    search = run("rostering", "search", instance, tmp_path, budget_s)
    assert search <= run("rostering", "rule", instance, tmp_path, budget_s)


@pytest.mark.parametrize("seed", (7, 11))
def test_timetabling_rule_repairs_when_stuck(seed, tmp_path):
    """c30 with only as many rooms as the generator's hidden timetable needs in its busiest period: the
    most-constrained-first order runs out of periods for some course, and the repair by unassignment
    still completes a feasible timetable; the search keeps it feasible."""
    budget_s = LADDERS["timetabling"].smoke_budget_s
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
    search = run("timetabling", "search", instance, tmp_path, budget_s)
    assert search <= run("timetabling", "rule", instance, tmp_path, budget_s)


def test_rcpsp_rule_keeps_the_shortest_of_its_priority_rules(tmp_path):
    """On orharbor-bench's first j30 level-2 instance, LFT alone is worse than naive; the multi-pass rule is not."""
    rule = load("rcpsp", "rule", tmp_path)
    rcpsp = problem_modules.get("rcpsp")
    instance = rcpsp.generate(1003000, "j30")
    naive = rcpsp.evaluate(instance, rcpsp.baseline(instance))
    makespans = {}
    for name, values in rule.priority_rules(instance).items():
        starts, _ = rule.serial_sgs(
            instance["durations"],
            instance["demands"],
            instance["capacities"],
            instance["successors"],
            [(v, i) for i, v in enumerate(values)],
        )
        makespans[name] = rcpsp.evaluate(instance, {"starts": starts})
    assert list(makespans)[0] == "LFT" and makespans["LFT"] > naive
    assert rcpsp.evaluate(instance, {"starts": rule.rule_schedule(instance)}) == min(makespans.values()) < naive
