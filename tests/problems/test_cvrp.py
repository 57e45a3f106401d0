"""The cvrp problem class: the X-instance design, CVRPLIB files, distances, baseline, reference.

The properties every class shares (contract, statement, golden digests, round trips, broken files,
baseline feasibility) are checked in tests/test_contract.py.
"""

from __future__ import annotations

import math
import random

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.cvrp.baseline import random_order, split
from orharbor.problem_modules.cvrp.formats import MATRIX_FORMATS, read_solution
from orharbor.problem_modules.cvrp.reference import fleet_size, lower_bound
from orharbor.problem_modules.cvrp.verify import distance_function
from orharbor.verifiers.reward import reward
from orharbor.verifiers.strict import Infeasible

from text_edits import edit_line as _edit

cvrp = problem_modules.get("cvrp")
#: The published files and their optimal (X-n101-k25: best known) costs.
OPTIMA = {"X-n101-k25": 27591, "E-n13-k4": 247, "P-n16-k8": 450}
#: The published CVRPLIB files, under instances/ (the ``folder`` and ``published`` fixtures).
FOLDER = "cvrp"


def test_statement_gives_the_exact_rounding_and_the_design():
    """Beyond the fields: the exact distance formula and the clustering rule of the generator."""
    text = cvrp.statement()
    for word in ("int(math.sqrt(dx*dx + dy*dy) + 0.5)", "exp(-d/40)"):
        assert word in text, word


# ----------------------------------------------------------------- generator


DEMAND_RANGES = {
    "unitary": (1, 1),
    "small-large-var": (1, 10),
    "small-small-var": (5, 10),
    "large-large-var": (1, 100),
    "large-small-var": (50, 100),
    "quadrant": (1, 100),
    "many-small-few-large": (1, 100),
}


@pytest.mark.parametrize("size", cvrp.SIZES)
def test_generate_follows_the_design(size):
    """Coordinates on the grid, distinct points, demands in the recorded range, capacity from r."""
    for seed in (5, 6):
        inst = cvrp.generate(seed, size)
        n = int(size[1:])
        gen = inst["generator"]
        assert inst["name"] == f"cvrp-{size}-s{seed}" and inst["n_customers"] == n and inst["rounding"] == "nint"
        assert (gen["seed"], gen["size"], gen["version"]) == (seed, size, 1)
        assert len(inst["coords"]) == n + 1 and all(0 <= v <= 1000 for pt in inst["coords"] for v in pt)
        assert len({tuple(pt) for pt in inst["coords"]}) == n + 1
        depot = {"centre": [500, 500], "corner": [0, 0]}.get(gen["depot_placement"])
        assert depot is None or inst["coords"][0] == depot
        lo, hi = DEMAND_RANGES[gen["demand_type"]]
        demands = inst["demands"]
        assert demands[0] == 0 and len(demands) == n + 1 and all(lo <= q <= hi for q in demands[1:])
        assert 3 <= gen["route_size"] <= 25
        assert gen["capacity_from_route_size"] == math.ceil(round(gen["route_size"] * 100) * sum(demands) / (100 * n))
        assert inst["capacity"] == max(gen["capacity_from_route_size"], max(demands))


def test_generator_draws_every_choice():
    """Over 200 seeds every depot placement, customer placement and demand type occurs."""
    gens = [cvrp.generate(s, "n20")["generator"] for s in range(200)]
    assert {g["depot_placement"] for g in gens} == {"random", "centre", "corner"}
    assert {g["customer_placement"] for g in gens} == {"random", "clustered", "random-clustered"}
    assert {g["demand_type"] for g in gens} == set(DEMAND_RANGES)
    insts = [cvrp.generate(s, "n50") for s in range(40)]
    quadrant = next(i for i in insts if i["generator"]["demand_type"] == "quadrant")
    for (x, y), q in zip(quadrant["coords"][1:], quadrant["demands"][1:]):
        assert (q <= 50) == ((x < 500) == (y < 500))
    many = next(i for i in insts if i["generator"]["demand_type"] == "many-small-few-large")
    assert sum(q <= 10 for q in many["demands"][1:]) == many["generator"]["n_small"]


def test_clustered_customers_gather():
    """Clustered customers lie much closer to their seeds than uniform points would."""
    inst = next(
        i for i in (cvrp.generate(s, "n400") for s in range(50)) if i["generator"]["customer_placement"] == "clustered"
    )
    k = inst["generator"]["n_cluster_seeds"]
    seeds, rest = inst["coords"][1 : k + 1], inst["coords"][k + 1 :]
    near = [min(math.dist(p, s) for s in seeds) for p in rest]
    assert sorted(near)[len(near) // 2] < 100


# ------------------------------------------------------------------- formats


@pytest.mark.parametrize("name", OPTIMA)
def test_real_files_round_trip_byte_for_byte(published, folder, name):
    """write(read(file)) reproduces each published file exactly, from a path, a string path or the text."""
    text = published(name + ".vrp")
    inst = cvrp.read(folder / (name + ".vrp"))
    assert cvrp.write(inst) == text
    assert cvrp.read(str(folder / (name + ".vrp"))) == inst
    assert cvrp.write(cvrp.read(text, "vrplib")) == text
    assert inst["name"] == name and inst["source"] == name + ".vrp"


def test_real_file_contents(folder):
    """Header values and data read as published; layouts stay small; E-n13-k4 keeps its explicit matrix."""
    x = cvrp.read(folder / "X-n101-k25.vrp")
    assert x["n_customers"] == 100 and x["capacity"] == 206 and x["rounding"] == "nint"
    assert x["coords"][0] == [365, 689] and x["coords"][100] == [615, 750]
    assert x["demands"][:3] == [0, 38, 51] and x["demands"][100] == 35
    assert x["comment"] == '"Generated by Uchoa, Pecin, Pessoa, Poggi, Subramanian, and Vidal (2013)"'
    assert x["layout"]["newline"] == "\r\n" and "lines" not in x["layout"]
    e = cvrp.read(folder / "E-n13-k4.vrp")
    assert e["rounding"] == "explicit" and e["edge_weight_format"] == "LOWER_ROW" and "coords" not in e
    assert e["distances"][1][0] == 9 and e["distances"][2][:2] == [14, 21] and e["distances"][12][10:] == [10, 10, 0]
    assert all(e["distances"][i][j] == e["distances"][j][i] for i in range(13) for j in range(13))
    assert e["capacity"] == 6000 and e["demands"][1] == 1200 and len(e["layout"]["lines"]) <= 6
    p = cvrp.read(folder / "P-n16-k8.vrp")
    assert p["capacity"] == 35 and p["coords"][15] == [37, 69] and set(p["layout"]) == {"row_styles"}


@pytest.mark.parametrize(("name", "cost"), OPTIMA.items())
def test_published_solutions_evaluate_to_their_cost(folder, name, cost):
    """The verifier gives each .sol file its published cost (nint rounding, explicit matrix)."""
    inst = cvrp.read(folder / (name + ".vrp"))
    solution, published = read_solution(folder / (name + ".sol"))
    assert published == cost
    assert cvrp.evaluate(inst, solution) == cost


def test_generated_files_use_the_canonical_layout():
    """A generated instance is written as CVRPLIB writes its X instances, and keeps its name."""
    inst = cvrp.generate(2, "n1000")
    text = cvrp.write(inst, "vrplib")
    assert cvrp.read(text)["name"] == inst["name"] and text.endswith("DEPOT_SECTION\n1\n-1\nEOF\n")
    assert text.startswith(f"NAME : {inst['name']}\nTYPE : CVRP\nDIMENSION : 1001\n")


def test_explicit_matrix_formats_round_trip(folder):
    """An explicit instance writes and reads back in every supported matrix format."""
    e = cvrp.read(folder / "E-n13-k4.vrp")
    for fmt in MATRIX_FORMATS:
        inst = {k: v for k, v in e.items() if k not in ("layout", "source")}
        inst["edge_weight_format"] = fmt
        back = cvrp.read(cvrp.write(inst))
        assert back["distances"] == e["distances"] and cvrp.write(back) == cvrp.write(inst)


@pytest.fixture(scope="module")
def p16(published) -> str:
    """The text of P-n16-k8.vrp, which the broken-file cases edit."""
    return published("P-n16-k8.vrp")


BROKEN = [
    (
        "bad header",
        lambda t: _edit(t, 2, "COMMENT without colon"),
        r"^<text>:2: expected 'KEY : value' or a section keyword",
    ),
    ("no capacity", lambda t: _edit(t, 6, None), r"^<text>:6: expected a CAPACITY header line before the sections$"),
    (
        "bad dimension",
        lambda t: _edit(t, 4, "DIMENSION : 1x"),
        r"^<text>:4: expected DIMENSION to be an integer >= 2, got '1x'$",
    ),
    ("wrong type", lambda t: _edit(t, 3, "TYPE : TSP"), r"^<text>:3: expected TYPE : CVRP, got 'TSP'$"),
    (
        "geo weights",
        lambda t: _edit(t, 5, "EDGE_WEIGHT_TYPE : GEO"),
        r"^<text>:5: unsupported EDGE_WEIGHT_TYPE 'GEO' \(supported: EUC_2D, EXPLICIT\)$",
    ),
    ("float coordinate", lambda t: _edit(t, 9, "2 37.5 52"), r"^<text>:9: expected an integer, got '37\.5'$"),
    (
        "short coord row",
        lambda t: _edit(t, 9, "2 37"),
        r"^<text>:9: expected the node coordinates of node 2 \(3 integers\), got '2 37'$",
    ),
    ("wrong node id", lambda t: _edit(t, 9, "3 37 52"), r"^<text>:9: expected node id 2, got 3$"),
    ("missing coord row", lambda t: _edit(t, 9, None), r"^<text>:9: expected node id 2, got 3$"),
    ("negative demand", lambda t: _edit(t, 26, "2 -19"), r"^<text>:26: node 2: negative demand -19$"),
    ("depot demand", lambda t: _edit(t, 25, "1 5"), r"^<text>:4: the depot \(node 1\) has demand 5, expected 0$"),
    (
        "demand above capacity",
        lambda t: _edit(t, 26, "2 36"),
        r"^<text>:6: node 2 has demand 36, above the CAPACITY 35$",
    ),
    (
        "second depot",
        lambda t: _edit(t, 42, " 2"),
        r"^<text>:42: expected the depot id 1 \(only node 1 may be the depot\), got '2'$",
    ),
    ("unterminated depots", lambda t: _edit(t, 43, " 5"), r"^<text>:43: expected -1 ending DEPOT_SECTION .*got '5'$"),
    (
        "unknown section",
        lambda t: _edit(t, 41, "TIME_WINDOW_SECTION"),
        r"^<text>:41: unsupported section TIME_WINDOW_SECTION",
    ),
    (
        "no depot section",
        lambda t: "\n".join(t.split("\n")[:40]) + "\nEOF\n",
        r"^<text>:42: expected a DEPOT_SECTION, got the end of the file$",
    ),
    (
        "truncated",
        lambda t: "\n".join(t.split("\n")[:30]),
        r"^<text>:31: expected the demand of node 7, got the end of the file$",
    ),
]


@pytest.mark.parametrize(("label", "make", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_are_rejected(p16, label, make, message):
    """Each defect raises ValueError with file:line and what was expected."""
    with pytest.raises(ValueError, match=message):
        cvrp.read(make(p16))


def test_short_explicit_matrix_is_rejected(published):
    """A matrix missing a row's values names the count expected and what came instead."""
    text = published("E-n13-k4.vrp").replace("    14    16    12    12    20     8    10    10\n", "")
    with pytest.raises(ValueError, match=r"^<text>:17: expected 78 edge weights, got 70 then 'DEMAND_SECTION'$"):
        cvrp.read(text)


def test_broken_solution_files_are_rejected(tmp_path):
    """A .sol line that is neither a route nor a cost names its file and line."""
    sol = tmp_path / "bad.sol"
    sol.write_text("Route #1: 1 2\nRoute #2: 3 x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^bad\.sol:2: expected a customer number >= 1, got 'x'$"):
        read_solution(sol)


# ------------------------------------------------------------------ verifier


def _small() -> dict:
    return {
        "problem": "cvrp",
        "name": "t",
        "n_customers": 4,
        "capacity": 10,
        "rounding": "nint",
        "coords": [[0, 0], [3, 4], [6, 8], [0, 5], [1, 1]],
        "demands": [0, 4, 5, 6, 3],
    }


def test_evaluate_small_exact():
    """Hand-computed lengths with nint rounding: d(0,1) = 5, d(1,2) = 5, d(0,4) = nint(1.414) = 1."""
    inst = _small()
    # [1, 2]: 5 + 5 + 10 = 20; [3, 4]: 5 + nint(sqrt(17)) + 1 = 5 + 4 + 1 = 10
    assert cvrp.evaluate(inst, {"routes": [[1, 2], [3, 4]]}) == 30
    assert cvrp.evaluate(inst, {"routes": [[], [2, 1], [], [4, 3]]}) == 30
    assert cvrp.evaluate(inst, {"routes": [[1], [2], [3], [4]]}) == 10 + 20 + 10 + 2


def test_distance_functions():
    """nint rounds the Euclidean distance to the nearest integer; explicit reads the matrix as given."""
    d = distance_function({"rounding": "nint", "coords": [[0, 0], [1, 1], [2, 1], [5, 12], [3, 3]]})
    assert d(0, 1) == 1 and d(0, 2) == 2 and d(0, 3) == 13 and d(0, 4) == 4  # 1.414, 2.236, 13, 4.243
    assert d(2, 4) == 2  # sqrt(5) = 2.236
    e = distance_function({"rounding": "explicit", "distances": [[0, 7], [3, 0]]})
    assert e(0, 1) == 7 and e(1, 0) == 3


def test_evaluate_matches_an_independent_computation():
    """On generated instances the verifier agrees with a plain recomputation of the baseline's routes."""
    for seed, size in ((0, "n50"), (3, "n200")):
        inst = cvrp.generate(seed, size)
        routes = cvrp.baseline(inst)["routes"]
        xy = inst["coords"]
        expected = sum(
            int(math.sqrt((xy[a][0] - xy[b][0]) ** 2 + (xy[a][1] - xy[b][1]) ** 2) + 0.5)
            for r in routes
            for a, b in zip([0] + r, r + [0])
        )
        assert cvrp.evaluate(inst, {"routes": routes}) == expected


BAD = [
    ("not an object", [[1, 2, 3, 4]], r"solution: expected a JSON object, got list"),
    ("extra key", {"routes": [[1, 2], [3, 4]], "cost": 30}, r"solution: unexpected key 'cost'"),
    ("missing key", {}, r"solution: missing key 'routes'"),
    ("routes not a list", {"routes": {"0": [1]}}, r"solution.routes: expected a list, got object"),
    ("route not a list", {"routes": [[1, 2], 3]}, r"solution.routes\[1\]: expected a list, got integer"),
    (
        "float customer",
        {"routes": [[1.0, 2], [3, 4]]},
        r"solution.routes\[0\]\[0\]: expected an integer, got float 1.0",
    ),
    ("bool customer", {"routes": [[True, 2], [3, 4]]}, r"solution.routes\[0\]\[0\]: expected an integer, got bool"),
    ("string customer", {"routes": [["1", 2], [3, 4]]}, r"solution.routes\[0\]\[0\]: expected an integer, got string"),
    ("null customer", {"routes": [[None]]}, r"solution.routes\[0\]\[0\]: expected an integer, got null"),
    (
        "huge customer",
        {"routes": [[10**400]]},
        r"solution.routes\[0\]\[0\]: integer <integer with over 4000 digits>|out of range",
    ),
    (
        "depot inside",
        {"routes": [[1, 0, 2], [3, 4]]},
        r"solution.routes\[0\]\[1\]: the depot \(0\) may not appear inside a route",
    ),
    (
        "unknown customer",
        {"routes": [[1, 2], [3, 5]]},
        r"solution.routes\[1\]\[1\]: 5 is not a customer \(customers are 1..4\)",
    ),
    ("negative customer", {"routes": [[1, 2], [3, -4]]}, r"solution.routes\[1\]\[1\]: -4 is not a customer"),
    (
        "duplicate",
        {"routes": [[1, 2], [3, 1], [4]]},
        r"solution.routes\[1\]\[1\]: customer 1 is already visited at solution.routes\[0\]\[0\]",
    ),
    ("missing customer", {"routes": [[1, 2], [3]]}, r"customer 4 never visited"),
    ("too long route", {"routes": [[1, 2, 3, 4, 1]]}, r"solution.routes\[0\]: 5 stops for 4 customers"),
    (
        "over capacity",
        {"routes": [[1], [2, 3], [4]]},
        r"solution.routes\[1\]: route 1 carries a load of 11, over the capacity 10",
    ),
    (
        "over capacity after empty",
        {"routes": [[], [1, 2, 4], [3]]},
        r"solution.routes\[1\]: route 1 carries a load of 12, over the capacity 10",
    ),
]


@pytest.mark.parametrize(("label", "solution", "message"), BAD, ids=[b[0] for b in BAD])
def test_broken_solutions_are_infeasible(label, solution, message):
    """Each broken answer raises Infeasible naming the first violated rule and its place."""
    with pytest.raises(Infeasible, match=message):
        cvrp.evaluate(_small(), solution)


@pytest.mark.parametrize(
    "garbage",
    [
        None,
        3,
        "routes",
        [],
        {"routes": None},
        {"routes": [[float("nan")]]},
        {"routes": [[[1]]]},
        {"routes": [[{"a": 1}]]},
        {1: [[1]]},
    ],
)
def test_garbage_raises_only_infeasible(garbage):
    """Any JSON value raises Infeasible (a ValueError), never another exception."""
    with pytest.raises(Infeasible):
        cvrp.evaluate(_small(), garbage)


# ------------------------------------------------------------- baseline/reference


@pytest.mark.parametrize("size", cvrp.SIZES[:4])
def test_baseline_is_one_of_the_fixed_splits(size):
    """The baseline's routes are the capacity split of one of the 31 fixed customer orders."""
    inst = cvrp.generate(2, size)
    sol = cvrp.baseline(inst)
    assert any(sol["routes"] == split(inst, random_order(inst, i)) for i in range(31))


@pytest.mark.parametrize("seed", [1, 5])
def test_random_answers_score_about_zero(seed):
    """100 random customer orders split by capacity average a reward within 0.15 of 0 (n50).

    Routing proves nothing and runs to its limit, so the reference, and with it the reward's
    scale naive - reference, depends on the machine. The rewards are taken against the arc
    lower bound instead, which no reference goes below: what holds at any speed.
    """
    inst = cvrp.generate(seed, "n50")
    naive = cvrp.evaluate(inst, cvrp.baseline(inst))
    floor = lower_bound(inst)
    assert floor < naive
    rewards = []
    for k in range(100):
        order = list(range(1, 51))
        random.Random(k).shuffle(order)
        rewards.append(reward(cvrp.evaluate(inst, {"routes": split(inst, order)}), naive, floor))
    assert abs(sum(rewards) / len(rewards)) <= 0.15


@pytest.mark.parametrize(("name", "optimum"), OPTIMA.items())
def test_reference_lies_between_the_optimum_and_the_baseline(folder, name, optimum):
    """On the published files the reference is feasible, never below the optimum, never above the baseline.

    Routing proves nothing and runs to its limit, so how close it gets depends on
    the machine: only what holds at any speed is asserted.
    """
    inst = cvrp.read(folder / (name + ".vrp"))
    solution, meta = cvrp.reference(inst, time_limit_s=1.0, workers=2)
    value = cvrp.evaluate(inst, solution)
    assert optimum <= value == meta["objective"] <= cvrp.evaluate(inst, cvrp.baseline(inst))
    assert meta["bound"] <= optimum and meta["solver"] == "ortools-routing" and meta["workers"] == 1
    assert meta["metaheuristic"] == "GUIDED_LOCAL_SEARCH" and meta["status"] == "FEASIBLE"
    # a first solution of its own, not the naive routes (guided local search barely leaves those on large instances)
    assert meta["started_from"] == "PATH_CHEAPEST_ARC"


def test_lower_bound_is_valid(folder):
    """The arc bound never exceeds the published optima."""
    for name, optimum in OPTIMA.items():
        assert 0 < lower_bound(cvrp.read(folder / (name + ".vrp"))) <= optimum
    assert fleet_size(10, 100) == 14 and fleet_size(10, 11) == 11
