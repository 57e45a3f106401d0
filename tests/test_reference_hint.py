"""A reference starts from a given answer (``hint=``): it reaches the solver, and a broken one is ignored.

The given hints are the class's ladder ``rule`` answers at smoke size, what the
benchmark build hands the references. Which start wins (the better of the
class's own and the given one) is tests/test_contract.py's property; here the
choice is forced to the given hint (:func:`given_wins`) so the tests see where
it goes: into CP-SAT's solution hint, complete and consistent (every variable
hinted; the model with every variable fixed to its hint is feasible with the
hint's objective), or into the routing search's starting assignment. Those are
structural, so they hold at any time limit.
"""

from __future__ import annotations

import copy
import functools

import pytest

from orharbor import problem_modules
from orharbor.problem_modules import cpsat, routing, warm_start
from orharbor.problem_modules.ladder_programs import answer_of
from orharbor.problem_modules.warm_start import GIVEN, Start

CPSAT = ("jobshop", "rcpsp", "wtardiness", "rostering", "timetabling")
ROUTING = ("cvrp", "vrptw")
#: Feasible answers other than the rule's, where the rule's is the class's own start (weighted tardiness: both ATC).
DISTINCT = {"wtardiness": lambda rule: {"sequence": rule["sequence"][::-1]}}


def test_every_class_is_covered():
    """Each registered class is a CP-SAT or a routing reference, so each gets its structural test."""
    assert sorted(CPSAT + ROUTING) == sorted(problem_modules.names())


@functools.cache
def _case(name: str, size: str | None = None) -> tuple:
    """``(module, instance, given answer)`` of an instance (smoke size by default): the rule's answer (or
    :data:`DISTINCT`'s). Copy the answer before changing it.
    """
    module = problem_modules.get(name)
    instance = module.generate(7, size or module.SIZES[0])
    rule = DISTINCT.get(name, lambda answer: answer)(answer_of(name, "rule", 1.0, instance))
    module.evaluate(instance, rule)  # a feasible hint, or the test data is wrong
    return module, instance, rule


@pytest.fixture
def given_wins(monkeypatch):
    """Every reference starts from an accepted given hint, whatever the class's own start is worth."""
    monkeypatch.setattr(warm_start, "better", lambda own, given: own if given is None else given)


# ------------------------------------------------------------------ the choice


def test_the_better_start_wins_and_the_given_one_on_a_tie():
    """Lower objective wins; a tie goes to the given hint; a missing one leaves the other."""
    own, given = Start("own", 5, "rule"), Start("given", 5, GIVEN)
    assert warm_start.better(own, given) is given
    assert warm_start.better(own, Start("g", 6, GIVEN)) is own
    assert warm_start.better(own, Start("g", 4.5, GIVEN)).objective == 4.5
    assert warm_start.better(own, None) is own and warm_start.better(None, given) is given


def test_a_given_hint_is_checked_copied_and_refused_with_a_one_line_note():
    """evaluate decides; any exception it raises refuses the hint with a short note; the hint is copied."""
    hint = {"x": [1, 2]}
    start, note = warm_start.given_start({}, lambda instance, solution: len(solution["x"]), hint)
    assert (start.objective, start.origin, note) == (2, GIVEN, None)
    assert start.solution == hint and start.solution["x"] is not hint["x"]
    assert warm_start.given_start({}, lambda i, s: 0, None) == (None, None)

    def refuse(instance, solution):
        raise TypeError("line one\nline two " + "x" * 1000)

    start, note = warm_start.given_start({}, refuse, hint)
    assert start is None and note.startswith("the given hint was ignored: line one line two x")
    assert "\n" not in note and len(note) < 400
    own = Start("own", 3, "rule")
    chosen = warm_start.choose({}, refuse, own, hint)
    assert (chosen.solution, chosen.record()) == ("own", {"from": "rule", "objective": 3, "note": note})


# ------------------------------------------------------------ CP-SAT classes


def _models(monkeypatch) -> list:
    """Copies of the models every ``cpsat.solve`` call gets, as they are when it is called."""
    seen = []
    real = cpsat.solve

    def spy(model, **kwargs):
        seen.append(model.clone())
        return real(model, **kwargs)

    monkeypatch.setattr(cpsat, "solve", spy)
    return seen


def _decision(name: str, instance: dict, solution: dict):
    """``value(variable name)``: the value ``solution`` gives a decision variable of the class's model, else None."""
    if name == "jobshop":
        return lambda var: (
            solution["starts"][int(var.split("_")[1])][int(var.split("_")[2])] if var.startswith("s_") else None
        )
    if name == "rcpsp":
        return lambda var: solution["starts"][int(var[2:])] if var.startswith("s_") else None
    if name == "wtardiness":
        start, clock = {}, 0
        for job in solution["sequence"]:
            start[job], clock = clock, clock + instance["processing_times"][job]
        return lambda var: start[int(var[2:])] if var.startswith("s_") else None
    if name == "rostering":
        rows = [solution["roster"][staff["id"]] for staff in instance["staff"]]

        def shift(var):
            _, e, d, s = var.split("_", 3)
            return int(rows[int(e)][int(d)] == s)

        return lambda var: shift(var) if var.startswith("x_") else None
    ppd = instance["periods_per_day"]
    course = {c["id"]: i for i, c in enumerate(instance["courses"])}
    room = {r["id"]: i for i, r in enumerate(instance["rooms"])}
    placed = {(course[c], d * ppd + p, room[r]) for c, r, d, p in solution["assignments"]}
    return lambda var: int(tuple(map(int, var.split("_")[1:])) in placed) if var.startswith("z_") else None


def _hinted(model) -> dict[str, int]:
    """The model's solution hint, by variable name."""
    proto = model.proto
    hint = proto.solution_hint
    return {proto.variables[i].name: v for i, v in zip(hint.vars, hint.values)}


@pytest.mark.parametrize(("name", "size"), [(name, None) for name in CPSAT] + [("timetabling", "c30")])
def test_cp_sat_is_hinted_the_given_answer_completely(name, size, monkeypatch, given_wins):
    """The first model with an objective holds the given answer's values on every variable, consistently.

    c30 has 8 rooms, more than timetabling offers each course: the given answer's rooms must be offered too.
    """
    module, instance, rule = _case(name, size)
    objective = module.evaluate(instance, rule)
    seen = _models(monkeypatch)
    module.reference(instance, time_limit_s=0.2, workers=1)
    own = next(m for m in seen if m.has_objective())
    seen.clear()
    _, meta = module.reference(instance, time_limit_s=0.2, workers=1, hint=copy.deepcopy(rule))
    model = next(m for m in seen if m.has_objective())
    assert meta["hint"] == {"from": GIVEN, "objective": objective}

    hinted, decision = _hinted(model), _decision(name, instance, rule)
    assert set(hinted) == {v.name for v in model.proto.variables}, "every variable is hinted"
    wanted = {var: decision(var) for var in hinted if decision(var) is not None}
    assert wanted and {var: hinted[var] for var in wanted} == wanted
    own_hint = _hinted(own)
    assert {var: own_hint.get(var) for var in wanted} != wanted, "the rule's answer is not the own start"

    assert _value_of_hint(model) == objective


def _value_of_hint(model):
    """The objective of the model with every variable fixed to its hint, None if that is infeasible."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    status = solver.solve(model)  # every variable fixed: presolve decides it
    assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE), solver.status_name(status)
    return solver.objective_value if status == cp_model.OPTIMAL else None


@pytest.mark.parametrize("name", ("jobshop", "rcpsp"))
def test_a_given_schedule_that_idles_fits_the_model(name, monkeypatch, given_wins):
    """A schedule that starts late (makespan beyond the sum of durations) is still a solution of the model."""
    module, instance, rule = _case(name)
    total = sum(map(sum, instance["durations"])) if name == "jobshop" else sum(instance["durations"])
    late = copy.deepcopy(rule)
    late["starts"] = (
        [[s + total for s in row] for row in late["starts"]]
        if name == "jobshop"
        else [s + total for s in late["starts"]]
    )
    objective = module.evaluate(instance, late)
    assert objective > total
    seen = _models(monkeypatch)
    module.reference(instance, time_limit_s=0.2, workers=1, hint=late)
    assert _value_of_hint(next(m for m in seen if m.has_objective())) == objective


# ----------------------------------------------------------- routing classes


@pytest.mark.parametrize("name", ROUTING)
@pytest.mark.slow
def test_routing_searches_from_the_given_routes(name, monkeypatch, given_wins):
    """The local search starts from an assignment holding exactly the given routes (ReadAssignmentFromRoutes)."""
    from ortools.constraint_solver import pywrapcp

    module, instance, rule = _case(name)
    objective = module.evaluate(instance, rule)
    _, own = module.reference(instance, time_limit_s=0.2, workers=1)
    # the class's own start (PATH_CHEAPEST_ARC's first solution, or the baseline when a loaded machine gives it
    # no time to find one) holds other routes than the given ones
    assert own["hint"]["from"] in ("PATH_CHEAPEST_ARC", "baseline") and own["hint"]["objective"] != objective
    seen = []
    real = routing.search_from

    def spy(model, assignment, params):
        manager = pywrapcp.RoutingIndexManager(instance["n_customers"] + 1, model.vehicles(), 0)
        seen.append(routing.routes_from(model, manager, assignment, model.vehicles()))
        return real(model, assignment, params)

    monkeypatch.setattr(routing, "search_from", spy)
    # 5 s: a safety net far above the milliseconds reading the routes in takes, which on a machine loaded past
    # 0.2 s found the deadline passed before the search could start
    solution, meta = module.reference(instance, time_limit_s=5.0, workers=1, hint=copy.deepcopy(rule))
    assert seen == [[route for route in rule["routes"] if route]]
    assert meta["hint"] == {"from": GIVEN, "objective": objective} and meta["started_from"] == GIVEN
    assert module.evaluate(instance, solution) == meta["objective"] <= objective


# -------------------------------------------------------------- broken hints


def _broken(name: str, instance: dict, answer: dict) -> dict:
    """``answer`` with one rule of the class broken, its shape intact."""
    bad = copy.deepcopy(answer)
    if name == "jobshop":  # an operation starts before its predecessor ends
        j, k = next((j, k) for j, row in enumerate(instance["durations"]) for k in range(1, len(row)) if row[k - 1])
        bad["starts"][j][k] = bad["starts"][j][k - 1]
    elif name == "rcpsp":  # an activity starts with its predecessor
        i, j = next((i, j) for i, after in enumerate(instance["successors"]) for j in after if instance["durations"][i])
        bad["starts"][j] = bad["starts"][i]
    elif name == "wtardiness":  # a job twice, another never
        bad["sequence"][1] = bad["sequence"][0]
    elif name in ROUTING:  # a customer left out
        next(route for route in bad["routes"] if route).pop(0)
    elif name == "rostering":  # an employee who must work never does
        bad["roster"][instance["staff"][0]["id"]] = [""] * instance["horizon"]
    else:  # a lecture left out
        bad["assignments"].pop()
    return bad


@pytest.mark.parametrize("name", problem_modules.names())
def test_an_infeasible_hint_is_ignored_with_the_verifier_s_reason(name):
    """A hint that breaks a rule is refused with a note quoting the verifier; the answer is still feasible."""
    module, instance, rule = _case(name)
    bad = _broken(name, instance, rule)
    with pytest.raises(ValueError) as refused:
        module.evaluate(instance, bad)
    solution, meta = module.reference(instance, time_limit_s=0.2, workers=1, hint=bad)
    assert meta["hint"]["from"] != GIVEN
    reason = " ".join(str(refused.value).split())[: warm_start.NOTE_CHARS]
    assert meta["hint"]["note"] == "the given hint was ignored: " + reason
    assert module.evaluate(instance, solution) == meta["objective"] <= meta["hint"]["objective"]


@pytest.mark.parametrize("name", ROUTING)
def test_given_routes_the_routing_model_refuses_leave_its_own_start(name, monkeypatch):
    """If ReadAssignmentFromRoutes refuses the given routes, the search starts from its own, saying so.

    The search is made to find nothing: the answer is then still the given
    routes (better than the own start here), never worse than them.
    """
    module, instance, rule = _case(name)
    objective = module.evaluate(instance, rule)
    given = [route for route in rule["routes"] if route]
    real = routing.assignment_of
    monkeypatch.setattr(
        routing,
        "assignment_of",
        lambda model, manager, routes: None if routes == given else real(model, manager, routes),
    )
    monkeypatch.setattr(routing, "search_from", lambda model, assignment, params: None)
    # 5 s: a safety net (the first solution alone takes milliseconds; a loaded machine ran 0.2 s out before it)
    solution, meta = module.reference(instance, time_limit_s=5.0, workers=1, hint=copy.deepcopy(rule))
    assert meta["hint"]["from"] == meta["started_from"] == "PATH_CHEAPEST_ARC" and meta["hint"]["objective"] > objective
    assert meta["hint"]["note"] == "the routing model refused the given routes; it searched from PATH_CHEAPEST_ARC"
    assert solution == rule and meta["objective"] == objective
