"""The strong solvers of the routing classes (PyVRP): verified answers, never worse than a hint, exact scaling.

No test asserts a gap to a best known value: what PyVRP reaches depends on time. Every assertion
holds at any time limit (the limits below only keep the suite short).
"""

from __future__ import annotations

import math
import subprocess
import sys
from importlib import metadata

import pytest

from orharbor import problem_modules
from orharbor.errors import UserError
from orharbor.problem_modules import pyvrp_runner
from orharbor.problem_modules.cvrp import strong as cvrp_strong
from orharbor.problem_modules.cvrp.formats import read_solution as read_cvrp_solution
from orharbor.problem_modules.vrptw import strong as vrptw_strong
from orharbor.problem_modules.vrptw.formats import read_solution as read_vrptw_solution
from orharbor.problem_modules.vrptw.verify import TOL, route_cost
from orharbor.verifiers.strict import Infeasible

ROUTING = ("cvrp", "vrptw")
#: Seconds per run; any value would do, the assertions do not depend on it.
LIMIT = 0.5
#: The published files (X-n101-k25 and Solomon's C101 share the cvrp folder) and their .sol readers.
PUBLISHED = {
    "cvrp": ("X-n101-k25.vrp", "X-n101-k25.sol", read_cvrp_solution),
    "vrptw": ("C101.txt", "C101.sol", read_vrptw_solution),
}


def smoke(name: str) -> dict:
    """The first smoke-size instance that one route cannot serve (capacity, or a window): a hint can break a rule."""
    cls = problem_modules.get(name)
    for seed in range(100):
        instance = cls.generate(seed, cls.SIZES[0])
        try:
            cls.evaluate(instance, {"routes": [list(range(1, instance["n_customers"] + 1))]})
        except Infeasible:
            return instance
    raise AssertionError(f"one route serves every {name} smoke instance")


def check_answer(name: str, instance: dict, solution: dict, meta: dict, hint_value=None) -> None:
    """The answer evaluates, meta says its objective, and it is no worse than a feasible hint."""
    objective = problem_modules.get(name).evaluate(instance, solution)
    assert meta["objective"] == objective
    assert meta["status"] == "FEASIBLE" and meta["bound"] is None
    assert meta["solver"] == "pyvrp" and meta["version"] == metadata.version("pyvrp")
    assert meta["workers"] == 1 and meta["wall_time_s"] >= 0
    if hint_value is not None:
        assert objective <= hint_value
        assert meta["hint"] == {"given": True, "feasible": True, "objective": hint_value, "warm_start": True}
    if name == "cvrp" and meta["answer"] == "pyvrp":
        assert meta["pyvrp_distance"] == objective  # the integer model is the verifier's own distances


# ----------------------------------------------------------------- the accessor


def test_strong_solver_is_the_folders_strong_or_none():
    assert problem_modules.strong_solver("cvrp") is cvrp_strong.strong
    assert problem_modules.strong_solver("vrptw") is vrptw_strong.strong
    for name in set(problem_modules.names()) - set(ROUTING):
        assert problem_modules.strong_solver(name) is None, name
    with pytest.raises(problem_modules.UnknownProblem):
        problem_modules.strong_solver("cvrpp")


def test_loading_a_class_and_its_strong_solver_does_not_import_pyvrp():
    """PyVRP runs only where datasets are built: the class, and even the accessor, must load without it."""
    code = (
        "import sys; from orharbor import problem_modules as p\n"
        "for n in ('cvrp', 'vrptw'): p.get(n); p.strong_solver(n)\n"
        "assert 'pyvrp' not in sys.modules, 'pyvrp imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ROUTING)
def test_strong_describes_pyvrp_in_one_line(name):
    text = problem_modules.part(name, "strong").STRONG
    assert "PyVRP" in text and "\n" not in text


# ----------------------------------------------------------------- answers


@pytest.mark.parametrize("name", ROUTING)
def test_smoke_instance_answer_is_verified_and_no_worse_than_the_baseline_hint(name):
    cls = problem_modules.get(name)
    instance = cls.generate(0, cls.SIZES[0])
    hint = cls.baseline(instance)
    solution, meta = problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT, seed=3, hint=hint)
    check_answer(name, instance, solution, meta, cls.evaluate(instance, hint))
    assert meta["seed"] == 3 and meta["time_limit_s"] == LIMIT


@pytest.mark.parametrize("name", ROUTING)
def test_published_instance_answer_is_verified_and_no_worse_than_the_published_routes(name, instances_dir):
    """Started from the published (best known) routes, the answer can only match them."""
    cls = problem_modules.get(name)
    instance_file, solution_file, read_solution = PUBLISHED[name]
    instance = cls.read(instances_dir / "cvrp" / instance_file)
    hint, _ = read_solution(instances_dir / "cvrp" / solution_file)
    solution, meta = problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT, hint=hint)
    check_answer(name, instance, solution, meta, cls.evaluate(instance, hint))
    if name == "cvrp":  # integer model = verifier: PyVRP's search starts at the hint and keeps its best
        assert meta["answer"] == "pyvrp"


@pytest.mark.parametrize("name", ROUTING)
def test_published_instance_without_hint(name, instances_dir):
    cls = problem_modules.get(name)
    instance = cls.read(instances_dir / "cvrp" / PUBLISHED[name][0])
    solution, meta = problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT)
    check_answer(name, instance, solution, meta)
    assert meta["hint"] == {"given": False} and meta["answer"] == "pyvrp"


def broken_hints(name: str, instance: dict) -> dict[str, object]:
    """Hints the verifier rejects: malformed ones, and one that breaks the class's own rule at a low distance."""
    n = instance["n_customers"]
    hints = {
        "not an object": [[1, 2]],
        "extra key": {"routes": [list(range(1, n + 1))], "cost": 1},
        "missing customers": {"routes": [[1]]},
        "depot inside": {"routes": [[0] + list(range(1, n + 1))]},
        "float customer": {"routes": [[1.0] + list(range(2, n + 1))]},
    }
    everyone = list(range(1, n + 1))
    hints["one route"] = {"routes": [everyone]}  # over the capacity or late: see smoke()
    return hints


@pytest.mark.parametrize("name", ROUTING)
def test_an_infeasible_or_malformed_hint_is_ignored_with_a_note(name):
    cls = problem_modules.get(name)
    instance = smoke(name)
    for label, hint in broken_hints(name, instance).items():
        with pytest.raises(Infeasible):
            cls.evaluate(instance, hint)
        solution, meta = problem_modules.strong_solver(name)(instance, time_limit_s=0.1, hint=hint)
        check_answer(name, instance, solution, meta)
        assert solution != hint, label
        assert meta["hint"]["given"] and not meta["hint"]["feasible"], label
        assert meta["hint"]["note"].startswith("hint ignored, the verifier rejects it: "), label


# ----------------------------------------------------------------- fallbacks (PyVRP replaced by a fake)


def fake_pyvrp_answer(monkeypatch, routes_for) -> None:
    """``pyvrp.solve`` returns ``routes_for(data)`` (PyVRP client numbers) as its best, whatever the start."""
    import pyvrp

    def fake_solve(data, stop, **_):
        return pyvrp.Result(pyvrp.Solution(data, routes_for(data)), pyvrp.Statistics(), 0, 0.0)

    monkeypatch.setattr(pyvrp, "solve", fake_solve)


def one_route(data) -> list[list[int]]:
    """Every client on one route, which smoke() instances cannot take."""
    return [list(range(data.num_clients))]


def singletons(data) -> list[list[int]]:
    """One route per client: feasible, and worse than a good answer."""
    return [[client] for client in range(data.num_clients)]


@pytest.mark.parametrize("name", ROUTING)
def test_routes_the_verifier_rejects_never_come_back(name, monkeypatch):
    cls = problem_modules.get(name)
    instance = smoke(name)
    hint = cls.baseline(instance)
    fake_pyvrp_answer(monkeypatch, one_route)
    solution, meta = problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT, hint=hint)
    check_answer(name, instance, solution, meta, cls.evaluate(instance, hint))
    assert solution == hint and meta["answer"] == "hint" and "rejected by the verifier" in meta["note"]
    with pytest.raises(UserError, match="PyVRP found no routes the verifier accepts"):
        problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT)


@pytest.mark.parametrize("name", ROUTING)
def test_an_answer_worse_than_the_hint_is_replaced_by_the_hint(name, monkeypatch):
    cls = problem_modules.get(name)
    instance = cls.generate(0, cls.SIZES[0])
    good, _ = problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT)
    worse = {"routes": [[c] for c in range(1, instance["n_customers"] + 1)]}
    assert cls.evaluate(instance, worse) > cls.evaluate(instance, good)
    fake_pyvrp_answer(monkeypatch, singletons)
    solution, meta = problem_modules.strong_solver(name)(instance, time_limit_s=LIMIT, hint=good)
    check_answer(name, instance, solution, meta, cls.evaluate(instance, good))
    assert solution == good and meta["answer"] == "hint" and "worse than the hint" in meta["note"]


# ----------------------------------------------------------------- VRPTW scaling


def knife_edge() -> dict:
    """Three lone customers whose float feasibility turns on less than ``1 / SCALE`` of a time unit.

    ``sqrt(m**2 + 1) = m + 1 / (2m)`` with ``m = 2 * SCALE``: customer 1 is reached ``1 / (4 SCALE)``
    after its due date, customer 3 is back at the depot that much after the horizon (both late for the
    verifier, yet on time if travel times were rounded down or to the nearest unit); customer 2 is
    exactly 5 away with due date 5 (on time: exact distances cost no slack).
    """
    m = 2 * vrptw_strong.SCALE
    assert TOL < math.sqrt(m * m + 1) - m < 0.5 / vrptw_strong.SCALE
    return {
        "problem": "vrptw",
        "name": "knife-edge",
        "n_customers": 3,
        "n_vehicles": 3,
        "capacity": 10,
        "coords": [[0, 0], [m, 1], [3, 4], [1, m]],
        "demands": [0, 1, 1, 1],
        "ready": [0, 0, 0, 0],
        "due": [2 * m, m, 5, 2 * m],
        "service": [0, 0, 0, 0],
        "time_tolerance": TOL,
    }


def test_vrptw_scaling_agrees_with_the_verifier_on_knife_edge_routes():
    import pyvrp

    instance = knife_edge()
    data = vrptw_strong.problem_data(instance)
    for customer, on_time in ((1, False), (2, True), (3, False)):
        try:
            route_cost(instance, [customer])
            accepted = True
        except Infeasible:
            accepted = False
        assert accepted is on_time, customer
        route = pyvrp.Solution(data, [[customer - 1]]).routes()[0]  # a lone route: the solution is incomplete
        assert route.is_feasible() is on_time, customer


def test_ceil_scaled_root_is_exact():
    scale = vrptw_strong.SCALE
    for squared in (0, 1, 2, 25, 10_001, 4 * scale * scale + 1, 10**8 - 1):
        t = vrptw_strong.ceil_scaled_root(squared)
        assert t * t >= scale * scale * squared > (t - 1) * (t - 1) or t == squared == 0


def tight_window_seeds(count: int = 3) -> list[int]:
    """The first seeds of the smoke size where every customer has a tight window of at most 5% of the horizon."""
    vrptw = problem_modules.get("vrptw")
    seeds = []
    for seed in range(1000):
        gen = vrptw.generate(seed, vrptw.SIZES[0])["generator"]
        if gen["tight_window_share_percent"] == 100 and gen["mean_half_width_fraction"] <= 0.05:
            seeds.append(seed)
            if len(seeds) == count:
                return seeds
    raise AssertionError("the generator no longer draws tight windows")


@pytest.mark.parametrize("seed", tight_window_seeds())
def test_every_route_pyvrp_calls_feasible_is_accepted_on_tight_windows(seed):
    """Every best solution PyVRP's search records along the way, when PyVRP calls it feasible, evaluates."""
    import pyvrp
    from pyvrp.stop import MaxRuntime

    vrptw = problem_modules.get("vrptw")
    instance = vrptw.generate(seed, vrptw.SIZES[0])
    bests = []

    class Record(pyvrp.IteratedLocalSearchCallbacks):
        def on_best(self, best):
            bests.append(best)

    params = pyvrp.SolveParams(ils=pyvrp.IteratedLocalSearchParams(callbacks=Record()))
    result = pyvrp.solve(vrptw_strong.problem_data(instance), MaxRuntime(LIMIT), seed=seed, params=params)
    feasible = [best for best in bests + [result.best] if best.is_feasible()]
    assert feasible, "PyVRP found nothing feasible (one route per customer is)"
    for best in feasible:
        vrptw.evaluate(instance, {"routes": pyvrp_runner.routes_of(best)})
    solution, meta = vrptw_strong.strong(instance, time_limit_s=LIMIT, seed=seed)
    check_answer("vrptw", instance, solution, meta)
    assert meta["answer"] == "pyvrp" and meta["scale"] == vrptw_strong.SCALE
