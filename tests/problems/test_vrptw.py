"""The vrptw problem class: the Solomon design and files, time windows and tolerance, baseline, reference.

The properties every class shares (contract, statement, golden digests, round trips, broken files,
baseline feasibility) are checked in tests/test_contract.py.
"""

from __future__ import annotations

import math
import random

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.vrptw.baseline import construct
from orharbor.problem_modules.vrptw.formats import read_solution
from orharbor.problem_modules.vrptw.reference import lower_bound
from orharbor.problem_modules.vrptw.verify import TOL
from orharbor.verifiers.reward import reward
from orharbor.verifiers.strict import Infeasible

from text_edits import edit_line
from work import lines_run

vrptw = problem_modules.get("vrptw")
C101_EXACT = 828.936867  # C101.sol with unrounded distances (the commonly cited best known value)
#: The published Solomon file C101 and its solution, kept with the CVRPLIB files under instances/.
FOLDER = "cvrp"


@pytest.fixture(scope="module")
def c101(folder) -> dict:
    return vrptw.read(folder / "C101.txt")


def tiny(**changes) -> dict:
    """Depot (0,0); customers (3,4), (6,8), (0,10); routes [[1, 2], [3]] are feasible, length 40."""
    inst = {
        "problem": "vrptw",
        "name": "tiny",
        "n_customers": 3,
        "n_vehicles": 2,
        "capacity": 10,
        "coords": [[0, 0], [3, 4], [6, 8], [0, 10]],
        "demands": [0, 5, 5, 8],
        "ready": [0, 0, 0, 20],
        "due": [100, 10, 20, 30],
        "service": [0, 1, 1, 2],
        "time_tolerance": 1e-6,
    }
    inst.update(changes)
    return inst


def test_statement_states_the_tolerance_and_the_distances():
    """Beyond the fields: the time tolerance, unrounded distances, the fleet that does not bind, Solomon."""
    text = vrptw.statement()
    for word in ("1e-6", "does **not** bind", "unrounded", "Solomon"):
        assert word in text, word


# ----------------------------------------------------------------- generator


@pytest.mark.parametrize("size", vrptw.SIZES)
def test_generate_follows_the_design(size):
    """Values lie in Solomon's ranges and every customer fits a route of its own."""
    for seed in (5, 6):
        inst = vrptw.generate(seed, size)
        n, gen = int(size[1:]), inst["generator"]
        assert inst["name"] == f"vrptw-{size}-s{seed}" and inst["n_customers"] == n
        assert (gen["seed"], gen["size"], gen["version"]) == (seed, size, 1)
        for key in ("coords", "demands", "ready", "due", "service"):
            assert len(inst[key]) == n + 1, key
        assert all(0 <= x <= 100 and 0 <= y <= 100 for x, y in inst["coords"])
        assert inst["demands"][0] == 0 and all(1 <= d <= 50 for d in inst["demands"][1:])
        assert inst["due"][0] == gen["horizon"] and inst["capacity"] == gen["capacity"]
        assert len(gen["tight_customers"]) == round(n * gen["tight_window_share_percent"] / 100)
        assert gen["coordinate_type"] in ("R", "C", "RC") and gen["horizon_type"] in (1, 2)
        vrptw.evaluate(inst, {"routes": [[c] for c in range(1, n + 1)]})  # feasible by construction


def test_generate_draws_every_design_parameter():
    """Across seeds, every coordinate type, horizon type, window share and width level occurs."""
    seen = {
        key: set()
        for key in ("coordinate_type", "horizon_type", "tight_window_share_percent", "mean_half_width_fraction")
    }
    for seed in range(60):
        gen = vrptw.generate(seed, "n8")["generator"]
        for key in seen:
            seen[key].add(gen[key])
    assert [len(v) for v in seen.values()] == [3, 2, 4, 4]


# ------------------------------------------------------------------- formats


def test_c101_round_trips_byte_for_byte(published, c101):
    """write(read(C101.txt)) reproduces the published file exactly (CRLF, trailing spaces)."""
    assert vrptw.write(c101) == published("C101.txt")
    assert c101["layout"] == {"format": "solomon", "newline": "\r\n"} and c101["source"] == "C101.txt"
    assert (c101["name"], c101["n_customers"], c101["n_vehicles"], c101["capacity"]) == ("C101", 100, 25, 200)
    assert c101["coords"][0] == [40, 50] and c101["due"][0] == 1236 and c101["service"][1] == 90
    assert vrptw.read(published("C101.txt"))["coords"] == c101["coords"]


def test_c101_solution_has_the_published_cost(folder, c101):
    """C101.sol is feasible; 827.3 is its cost with distances truncated to one decimal, 828.94 unrounded."""
    solution, cost = read_solution(folder / "C101.sol")
    assert cost == 827.3 and len(solution["routes"]) == 10
    assert abs(vrptw.evaluate(c101, solution) - C101_EXACT) < 1e-6
    xy = c101["coords"]
    truncated = 0.0
    for route in solution["routes"]:
        stops = [0, *route, 0]
        truncated += sum(math.floor(10 * math.dist(xy[a], xy[b])) / 10 for a, b in zip(stops, stops[1:]))
    assert abs(truncated - 827.3) < 0.05


def _lines() -> list[str]:
    return vrptw.write(tiny()).split("\n")


def _edit(lineno: int, new: str | None) -> str:
    return edit_line("\n".join(_lines()), lineno, new)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_edit(1, "  "), r"<text>:1: expected the instance name on the first line"),
        (_edit(3, "VEHICLES"), r"<text>:3: expected the VEHICLE section"),
        (_edit(4, "NUMBER CAP"), r"<text>:4: expected the header 'NUMBER CAPACITY'"),
        (_edit(5, "  2"), r"<text>:5: expected 2 integers"),
        (_edit(5, "  x  10"), r"<text>:5: expected an integer .* got 'x'"),
        (_edit(5, "  0  10"), r"<text>:5: expected a positive number of vehicles"),
        (_edit(7, "CUSTOMERS"), r"<text>:7: expected the CUSTOMER section"),
        (_edit(8, "NO. X Y"), r"<text>:8: expected the column header"),
        (_edit(11, "    1      3     4     5     0     10"), r"<text>:11: expected 7 integers"),
        (_edit(11, "    2      3     4     5     0     10     1"), r"<text>:11: expected node number 1, got 2"),
        (_edit(11, "    1      3     4    -5     0     10     1"), r"<text>:11: node 1: negative demand -5"),
        (_edit(11, "    1      3     4     5    20     10     1"), r"<text>:11: node 1: due date 10 before ready"),
        (_edit(10, "    0      0     0     3     0    100     0"), r"<text>:10: the depot \(node 0\) has demand 3"),
        ("\n".join(_lines()[:10]), r"<text>:11: expected the depot and at least one customer"),
        ("\n".join(_lines()[:4]), r"<text>:5: expected the number of vehicles and the capacity, got the end"),
    ],
)
def test_broken_files_name_file_and_line(text, message):
    """Each defect raises ValueError with file:line and what was expected."""
    with pytest.raises(ValueError, match=message):
        vrptw.read(text)


def test_broken_solution_file():
    """A .sol line that is neither a route nor a cost is reported with its line."""
    with pytest.raises(ValueError, match=r"<text>:2: expected a customer number, got 'x'"):
        read_solution("Route #1: 1 2\nRoute #2: 3 x\nCost 1\n")


# ------------------------------------------------------------------ verifier


def test_verifier_accepts_the_tiny_instance():
    """The hand-checked routes cost exactly 40; waiting before a window opens is allowed."""
    assert vrptw.evaluate(tiny(), {"routes": [[1, 2], [], [3]]}) == 40.0
    assert vrptw.evaluate(tiny(), {"routes": [[3], [1, 2]]}) == 40.0


@pytest.mark.parametrize(
    ("solution", "message"),
    [
        (None, r"solution: expected a JSON object, got null"),
        ([[1, 2, 3]], r"solution: expected a JSON object, got list"),
        ({}, r"missing key 'routes'"),
        ({"routes": [[1, 2, 3]], "cost": 1}, r"unexpected key 'cost'"),
        ({"routes": "1 2 3"}, r"solution.routes: expected a list, got string"),
        ({"routes": [[1, 2], 3]}, r"solution.routes\[1\]: expected a list, got integer"),
        ({"routes": [[1, 2.0], [3]]}, r"solution.routes\[0\]\[1\]: expected an integer, got float"),
        ({"routes": [[1, True], [3]]}, r"solution.routes\[0\]\[1\]: expected an integer, got bool"),
        ({"routes": [[1, None], [3]]}, r"expected an integer, got null"),
        ({"routes": [[1, float("nan")], [3]]}, r"expected an integer, got float nan"),
        ({"routes": [[1, 10**40], [3]]}, r"out of range"),
        ({"routes": [[1, 0, 2], [3]]}, r"solution.routes\[0\]\[1\]: the depot \(0\) may not appear"),
        ({"routes": [[1, 4], [3]]}, r"4 is not a customer \(customers are 1..3\)"),
        ({"routes": [[1, 2], [3, 1]]}, r"solution.routes\[1\]\[1\]: customer 1 is already visited"),
        ({"routes": [[1, 2]]}, r"customer 3 never visited"),
        ({"routes": [[1, 3], [2]]}, r"solution.routes\[0\]: load 13 exceeds the capacity 10 at customer 3"),
        ({"routes": [[], [2, 1], [3]]}, r"solution.routes\[1\]: customer 1 is reached at 16.0 after its due date 10"),
        ({"routes": [[1], [], [2]]}, r"customer 3 never visited"),
    ],
)
def test_verifier_rejects_broken_solutions(solution, message):
    """Each broken solution raises Infeasible naming the first violated rule and its place."""
    with pytest.raises(Infeasible, match=message):
        vrptw.evaluate(tiny(), solution)


def test_waiting_does_not_excuse_a_late_arrival():
    """Waiting at customer 3 until it opens makes the vehicle reach customer 2 too late."""
    with pytest.raises(
        Infeasible, match=r"solution.routes\[1\]: customer 2 is reached at 28.32\d* after its due date 20"
    ):
        vrptw.evaluate(tiny(capacity=20), {"routes": [[1], [3, 2]]})


def test_verifier_checks_the_depot_horizon():
    """A route that returns after the depot's due date is infeasible, naming the return time."""
    with pytest.raises(Infeasible, match=r"solution.routes\[1\]: returns to the depot at 32.0 after .* due date 30"):
        vrptw.evaluate(tiny(due=[30, 10, 20, 30]), {"routes": [[1, 2], [3]]})


def test_time_tolerance_is_exactly_one_millionth():
    """Arriving up to 1e-6 after the due date is accepted; 2e-6 after is late."""
    assert TOL == 1e-6
    inst = tiny(due=[100, 5, 20, 30])
    assert vrptw.evaluate(inst, {"routes": [[1, 2], [3]]}) == 40.0  # arrival exactly 5.0
    inst["ready"] = [5e-7, 0, 0, 20]  # departure from the depot shifts every arrival
    assert vrptw.evaluate(inst, {"routes": [[1, 2], [3]]}) == 40.0
    inst["ready"] = [2e-6, 0, 0, 20]
    with pytest.raises(Infeasible, match="customer 1 is reached at 5.000002 after its due date 5"):
        vrptw.evaluate(inst, {"routes": [[1, 2], [3]]})


def test_verifier_is_fast_on_n1000():
    """evaluate is linear: per customer it runs no more lines on an n1000 instance than on an n100 one
    (counted, not timed; a quadratic check would run about ten times as many)."""
    per_customer = {}
    for size in ("n100", "n1000"):
        inst = vrptw.generate(1, size)
        _, lines = lines_run(vrptw.evaluate, inst, vrptw.baseline(inst), budget=1_000_000)
        per_customer[size] = lines / inst["n_customers"]
    assert per_customer["n1000"] <= 1.5 * per_customer["n100"], per_customer


# ------------------------------------------------------------------ baseline


def test_baseline_fits_c101(c101):
    """On C101 the baseline is feasible (every customer fits a route of its own there)."""
    assert vrptw.evaluate(c101, vrptw.baseline(c101)) > C101_EXACT


@pytest.mark.parametrize("seed", [0, 7])
def test_random_first_fit_answers_average_reward_near_zero(seed):
    """100 random customer orders built the same way average a reward within 0.15 of 0.

    Routing proves nothing and runs to its limit, so the reference, and with it the reward's
    scale naive - reference, depends on the machine. The rewards are taken against the
    nearest-neighbour lower bound instead, which no reference goes below: what holds at any speed.
    """
    inst = vrptw.generate(seed, "n25")
    naive = vrptw.evaluate(inst, vrptw.baseline(inst))
    floor = lower_bound(inst)
    assert floor < naive
    rewards = []
    for k in range(100):
        order = list(range(1, 26))
        random.Random(k).shuffle(order)
        rewards.append(reward(vrptw.evaluate(inst, construct(inst, order)), naive, floor))
    assert abs(sum(rewards) / len(rewards)) < 0.15


# ----------------------------------------------------------------- reference


def test_reference_on_c101_lies_between_the_best_known_and_the_baseline(c101):
    """On C101 the reference is feasible, never below the best known 828.94, never above the baseline.

    Routing proves nothing and runs to its limit (it reaches 828.94 at 3 s on a quiet
    machine), so how close it gets depends on the machine: only what holds at any speed is asserted.
    """
    solution, meta = vrptw.reference(c101, time_limit_s=1.0, workers=1)
    objective = vrptw.evaluate(c101, solution)
    assert meta["objective"] == objective and meta["bound"] <= C101_EXACT
    assert C101_EXACT - 1e-6 <= objective <= vrptw.evaluate(c101, vrptw.baseline(c101))
    assert meta["solver"] == "ortools-routing" and meta["metaheuristic"] == "GUIDED_LOCAL_SEARCH"
    assert meta["started_from"] == "PATH_CHEAPEST_ARC"


def test_reference_on_a_generated_instance():
    """The reference is feasible, no worse than the baseline, with a valid bound and full meta."""
    inst = vrptw.generate(3, "n50")
    solution, meta = vrptw.reference(inst, time_limit_s=1.0, workers=2, seed=0)
    objective = vrptw.evaluate(inst, solution)
    assert objective == meta["objective"] <= vrptw.evaluate(inst, vrptw.baseline(inst))
    assert 0 <= meta["bound"] <= objective and meta["status"] in ("FEASIBLE", "FEASIBLE_HINT")
    assert {
        "solver",
        "version",
        "status",
        "objective",
        "bound",
        "time_limit_s",
        "workers",
        "seed",
        "wall_time_s",
        "first_solution_strategy",
        "metaheuristic",
    } <= set(meta)
