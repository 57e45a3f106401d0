"""The cvrp problem module: generator, formats, verifier, baseline, reference."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from orharbor.jsonio import digest
from orharbor.problem_modules import cvrp
from orharbor.verifiers.reward import reward
from orharbor.verifiers.strict import Infeasible

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "instances" / "cvrp"
DATA_KEYS = ("n_customers", "capacity", "coords", "demands", "rounding")
REAL = ("X-n101-k25", "E-n13-k4", "P-n16-k8")


def fixture_text(name: str) -> str:
    with open(FIXTURES / name, encoding="utf-8", newline="") as fh:
        return fh.read()


# ------------------------------------------------------------------ contract


def test_contract_names():
    """The module exports the contract names with the issue's values."""
    assert cvrp.NAME == "cvrp" and cvrp.TITLE == "Capacitated vehicle routing"
    assert cvrp.OBJECTIVE == "total distance" and cvrp.FORMATS == ("vrplib",)
    assert cvrp.SIZES == ("n8", "n20", "n50", "n100", "n200", "n400", "n1000")
    assert cvrp.GENERATOR_VERSION == 1
    assert isinstance(cvrp.BASELINE, str) and len(cvrp.BASELINE) > 100
    for name in ("generate", "read", "read_solution", "write", "evaluate", "baseline", "reference", "statement"):
        assert callable(getattr(cvrp, name)), name


def test_statement():
    """The statement names the fields, the exact rounding formula, the rules and the generator."""
    text = cvrp.statement()
    assert text.startswith("# Capacitated vehicle routing")
    for word in ("n_customers", "capacity", "demands", "coords", "rounding", "routes",
                 "int(math.sqrt(dx*dx + dy*dy) + 0.5)", "exp(-d/40)", "How instances are generated"):
        assert word in text
    assert 40 <= len(text.splitlines()) <= 80


# ----------------------------------------------------------------- generator


@pytest.mark.parametrize(
    ("seed", "size", "expected"),
    [
        (0, "n8", "9c032118c7ba418afdb8588d488444fb9eab634876ccca08d08a3d101ac73988"),
        (7, "n100", "5686ef55c39b77abc42e6de7ed708cfd84203b873240a5fc1f5c984d1ff45f5b"),
        (123456789, "n1000", "74b1546dd78f18ff7fc9a3a046efc39355021a8951afda1cea4c4cab064e06b3"),
    ],
)
def test_generate_golden_hashes(seed, size, expected):
    """generate is pinned byte for byte."""
    assert digest(cvrp.generate(seed, size)) == expected


DEMAND_RANGES = {"unitary": (1, 1), "small-large-var": (1, 10), "small-small-var": (5, 10),
                 "large-large-var": (1, 100), "large-small-var": (50, 100), "quadrant": (1, 100),
                 "many-small-few-large": (1, 100)}


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
        assert json.loads(json.dumps(inst)) == inst


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
    inst = next(i for i in (cvrp.generate(s, "n400") for s in range(50))
                if i["generator"]["customer_placement"] == "clustered")
    k = inst["generator"]["n_cluster_seeds"]
    seeds, rest = inst["coords"][1:k + 1], inst["coords"][k + 1:]
    near = [min(math.dist(p, s) for s in seeds) for p in rest]
    assert sorted(near)[len(near) // 2] < 100


@pytest.mark.parametrize(("seed", "size"), [(0, "n7"), (0, "N20"), (0, 20), (-1, "n8"), (True, "n8"), (1.0, "n8"), ("1", "n8"), (2**64, "n8")])
def test_generate_rejects_bad_arguments(seed, size):
    """Unknown sizes and bad seeds raise ValueError listing the valid sizes."""
    with pytest.raises(ValueError, match="valid sizes: n8, n20, n50"):
        cvrp.generate(seed, size)


# ------------------------------------------------------------------- formats


@pytest.mark.parametrize("name", REAL)
def test_real_files_round_trip_byte_for_byte(name):
    """write(read(file)) reproduces each published file exactly, from a path, a string path or the text."""
    text = fixture_text(name + ".vrp")
    inst = cvrp.read(FIXTURES / (name + ".vrp"))
    assert cvrp.write(inst) == text
    assert cvrp.read(str(FIXTURES / (name + ".vrp"))) == inst
    assert cvrp.write(cvrp.read(text, "vrplib")) == text
    assert inst["name"] == name and inst["source"] == name + ".vrp"


def test_real_file_contents():
    """Header values and data read as published; layouts stay small; E-n13-k4 keeps its explicit matrix."""
    x = cvrp.read(FIXTURES / "X-n101-k25.vrp")
    assert x["n_customers"] == 100 and x["capacity"] == 206 and x["rounding"] == "nint"
    assert x["coords"][0] == [365, 689] and x["coords"][100] == [615, 750]
    assert x["demands"][:3] == [0, 38, 51] and x["demands"][100] == 35
    assert x["comment"] == '"Generated by Uchoa, Pecin, Pessoa, Poggi, Subramanian, and Vidal (2013)"'
    assert x["layout"]["newline"] == "\r\n" and "lines" not in x["layout"]
    e = cvrp.read(FIXTURES / "E-n13-k4.vrp")
    assert e["rounding"] == "explicit" and e["edge_weight_format"] == "LOWER_ROW" and "coords" not in e
    assert e["distances"][1][0] == 9 and e["distances"][2][:2] == [14, 21] and e["distances"][12][10:] == [10, 10, 0]
    assert all(e["distances"][i][j] == e["distances"][j][i] for i in range(13) for j in range(13))
    assert e["capacity"] == 6000 and e["demands"][1] == 1200 and len(e["layout"]["lines"]) <= 6
    p = cvrp.read(FIXTURES / "P-n16-k8.vrp")
    assert p["capacity"] == 35 and p["coords"][15] == [37, 69] and set(p["layout"]) == {"row_styles"}


@pytest.mark.parametrize(("name", "cost"), [("X-n101-k25", 27591), ("E-n13-k4", 247), ("P-n16-k8", 450)])
def test_published_solutions_evaluate_to_their_cost(name, cost):
    """The verifier gives each .sol file its published cost (nint rounding, explicit matrix)."""
    inst = cvrp.read(FIXTURES / (name + ".vrp"))
    solution, published = cvrp.read_solution(FIXTURES / (name + ".sol"))
    assert published == cost
    assert cvrp.evaluate(inst, solution) == cost


@pytest.mark.parametrize(("seed", "size"), [(0, "n8"), (1, "n50"), (2, "n1000")])
def test_generated_round_trip(seed, size):
    """read(write(x)) gives back x's data and writes the same text, in the canonical layout."""
    inst = cvrp.generate(seed, size)
    text = cvrp.write(inst, "vrplib")
    back = cvrp.read(text, "vrplib")
    assert "layout" not in back and back["name"] == inst["name"]
    assert {k: back[k] for k in DATA_KEYS} == {k: inst[k] for k in DATA_KEYS}
    assert cvrp.write(back) == text and text.endswith("DEPOT_SECTION\n1\n-1\nEOF\n")
    assert text.startswith(f"NAME : {inst['name']}\nTYPE : CVRP\nDIMENSION : {int(size[1:]) + 1}\n")


def test_explicit_matrix_formats_round_trip():
    """An explicit instance writes and reads back in every supported matrix format."""
    e = cvrp.read(FIXTURES / "E-n13-k4.vrp")
    for fmt in cvrp.formats.MATRIX_FORMATS:
        inst = {k: v for k, v in e.items() if k not in ("layout", "source")}
        inst["edge_weight_format"] = fmt
        back = cvrp.read(cvrp.write(inst))
        assert back["distances"] == e["distances"] and cvrp.write(back) == cvrp.write(inst)


P16 = fixture_text("P-n16-k8.vrp")


def _edit(lineno: int, new: str | None) -> str:
    lines = P16.split("\n")
    if new is None:
        del lines[lineno - 1]
    else:
        lines[lineno - 1] = new
    return "\n".join(lines)


BROKEN = [
    ("bad header", lambda: _edit(2, "COMMENT without colon"), r"^<text>:2: expected 'KEY : value' or a section keyword"),
    ("no capacity", lambda: _edit(6, None), r"^<text>:6: expected a CAPACITY header line before the sections$"),
    ("bad dimension", lambda: _edit(4, "DIMENSION : 1x"), r"^<text>:4: expected DIMENSION to be an integer >= 2, got '1x'$"),
    ("wrong type", lambda: _edit(3, "TYPE : TSP"), r"^<text>:3: expected TYPE : CVRP, got 'TSP'$"),
    ("geo weights", lambda: _edit(5, "EDGE_WEIGHT_TYPE : GEO"), r"^<text>:5: unsupported EDGE_WEIGHT_TYPE 'GEO' \(supported: EUC_2D, EXPLICIT\)$"),
    ("float coordinate", lambda: _edit(9, "2 37.5 52"), r"^<text>:9: expected an integer, got '37\.5'$"),
    ("short coord row", lambda: _edit(9, "2 37"), r"^<text>:9: expected the node coordinates of node 2 \(3 integers\), got '2 37'$"),
    ("wrong node id", lambda: _edit(9, "3 37 52"), r"^<text>:9: expected node id 2, got 3$"),
    ("missing coord row", lambda: _edit(9, None), r"^<text>:9: expected node id 2, got 3$"),
    ("negative demand", lambda: _edit(26, "2 -19"), r"^<text>:26: node 2: negative demand -19$"),
    ("depot demand", lambda: _edit(25, "1 5"), r"^<text>:4: the depot \(node 1\) has demand 5, expected 0$"),
    ("demand above capacity", lambda: _edit(26, "2 36"), r"^<text>:6: node 2 has demand 36, above the CAPACITY 35$"),
    ("second depot", lambda: _edit(42, " 2"), r"^<text>:42: expected the depot id 1 \(only node 1 may be the depot\), got '2'$"),
    ("unterminated depots", lambda: _edit(43, " 5"), r"^<text>:43: expected -1 ending DEPOT_SECTION .*got '5'$"),
    ("unknown section", lambda: _edit(41, "TIME_WINDOW_SECTION"), r"^<text>:41: unsupported section TIME_WINDOW_SECTION"),
    ("no depot section", lambda: "\n".join(P16.split("\n")[:40]) + "\nEOF\n", r"^<text>:42: expected a DEPOT_SECTION, got the end of the file$"),
    ("truncated", lambda: "\n".join(P16.split("\n")[:30]), r"^<text>:31: expected the demand of node 7, got the end of the file$"),
    ("content after EOF", lambda: P16 + "1 2 3\n", r"^<text>:45: unexpected content after EOF: '1 2 3'$"),
    ("short matrix", lambda: fixture_text("E-n13-k4.vrp").replace("    14    16    12    12    20     8    10    10\n", ""),
     r"^<text>:17: expected 78 edge weights, got 70 then 'DEMAND_SECTION'$"),
]


@pytest.mark.parametrize(("label", "make", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_are_rejected(label, make, message):
    """Each defect raises ValueError with file:line and what was expected."""
    with pytest.raises(ValueError, match=message):
        cvrp.read(make())


def test_broken_file_message_names_the_file(tmp_path):
    """Messages name the file; bad formats and bad .sol lines are rejected."""
    path = tmp_path / "bad.vrp"
    path.write_text(_edit(9, "2 x 52"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"^bad\.vrp:9: expected an integer, got 'x'$"):
        cvrp.read(path)
    with pytest.raises(ValueError, match="unknown cvrp format"):
        cvrp.read(FIXTURES / "P-n16-k8.vrp", "solomon")
    sol = tmp_path / "bad.sol"
    sol.write_text("Route #1: 1 2\nRoute #2: 3 x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^bad\.sol:2: expected a customer number >= 1, got 'x'$"):
        cvrp.read_solution(sol)


# ------------------------------------------------------------------ verifier


def _small() -> dict:
    return {"problem": "cvrp", "name": "t", "n_customers": 4, "capacity": 10, "rounding": "nint",
            "coords": [[0, 0], [3, 4], [6, 8], [0, 5], [1, 1]], "demands": [0, 4, 5, 6, 3]}


def test_evaluate_small_exact():
    """Hand-computed lengths with nint rounding: d(0,1) = 5, d(1,2) = 5, d(0,4) = nint(1.414) = 1."""
    inst = _small()
    # [1, 2]: 5 + 5 + 10 = 20; [3, 4]: 5 + nint(sqrt(17)) + 1 = 5 + 4 + 1 = 10
    assert cvrp.evaluate(inst, {"routes": [[1, 2], [3, 4]]}) == 30
    assert cvrp.evaluate(inst, {"routes": [[], [2, 1], [], [4, 3]]}) == 30
    assert cvrp.evaluate(inst, {"routes": [[1], [2], [3], [4]]}) == 10 + 20 + 10 + 2


def test_distance_functions():
    """nint rounds the Euclidean distance to the nearest integer; explicit reads the matrix as given."""
    d = cvrp.distance_function({"rounding": "nint", "coords": [[0, 0], [1, 1], [2, 1], [5, 12], [3, 3]]})
    assert d(0, 1) == 1 and d(0, 2) == 2 and d(0, 3) == 13 and d(0, 4) == 4  # 1.414, 2.236, 13, 4.243
    assert d(2, 4) == 2  # sqrt(5) = 2.236
    e = cvrp.distance_function({"rounding": "explicit", "distances": [[0, 7], [3, 0]]})
    assert e(0, 1) == 7 and e(1, 0) == 3


def test_evaluate_matches_an_independent_computation():
    """On generated instances the verifier agrees with a plain recomputation of the baseline's routes."""
    for seed, size in ((0, "n50"), (3, "n200")):
        inst = cvrp.generate(seed, size)
        routes = cvrp.baseline(inst)["routes"]
        xy = inst["coords"]
        expected = sum(int(math.sqrt((xy[a][0] - xy[b][0]) ** 2 + (xy[a][1] - xy[b][1]) ** 2) + 0.5)
                       for r in routes for a, b in zip([0] + r, r + [0]))
        assert cvrp.evaluate(inst, {"routes": routes}) == expected


BAD = [
    ("not an object", [[1, 2, 3, 4]], r"solution: expected a JSON object, got list"),
    ("extra key", {"routes": [[1, 2], [3, 4]], "cost": 30}, r"solution: unexpected key 'cost'"),
    ("missing key", {}, r"solution: missing key 'routes'"),
    ("routes not a list", {"routes": {"0": [1]}}, r"solution.routes: expected a list, got object"),
    ("route not a list", {"routes": [[1, 2], 3]}, r"solution.routes\[1\]: expected a list, got integer"),
    ("float customer", {"routes": [[1.0, 2], [3, 4]]}, r"solution.routes\[0\]\[0\]: expected an integer, got float 1.0"),
    ("bool customer", {"routes": [[True, 2], [3, 4]]}, r"solution.routes\[0\]\[0\]: expected an integer, got bool"),
    ("string customer", {"routes": [["1", 2], [3, 4]]}, r"solution.routes\[0\]\[0\]: expected an integer, got string"),
    ("null customer", {"routes": [[None]]}, r"solution.routes\[0\]\[0\]: expected an integer, got null"),
    ("huge customer", {"routes": [[10**400]]}, r"solution.routes\[0\]\[0\]: integer <integer with over 4000 digits>|out of range"),
    ("depot inside", {"routes": [[1, 0, 2], [3, 4]]}, r"solution.routes\[0\]\[1\]: the depot \(0\) may not appear inside a route"),
    ("unknown customer", {"routes": [[1, 2], [3, 5]]}, r"solution.routes\[1\]\[1\]: 5 is not a customer \(customers are 1..4\)"),
    ("negative customer", {"routes": [[1, 2], [3, -4]]}, r"solution.routes\[1\]\[1\]: -4 is not a customer"),
    ("duplicate", {"routes": [[1, 2], [3, 1], [4]]}, r"solution.routes\[1\]\[1\]: customer 1 is already visited at solution.routes\[0\]\[0\]"),
    ("missing customer", {"routes": [[1, 2], [3]]}, r"customer 4 never visited"),
    ("too long route", {"routes": [[1, 2, 3, 4, 1]]}, r"solution.routes\[0\]: 5 stops for 4 customers"),
    ("over capacity", {"routes": [[1], [2, 3], [4]]}, r"solution.routes\[1\]: route 1 carries a load of 11, over the capacity 10"),
    ("over capacity after empty", {"routes": [[], [1, 2, 4], [3]]}, r"solution.routes\[1\]: route 1 carries a load of 12, over the capacity 10"),
]


@pytest.mark.parametrize(("label", "solution", "message"), BAD, ids=[b[0] for b in BAD])
def test_broken_solutions_are_infeasible(label, solution, message):
    """Each broken answer raises Infeasible naming the first violated rule and its place."""
    with pytest.raises(Infeasible, match=message):
        cvrp.evaluate(_small(), solution)


@pytest.mark.parametrize("garbage", [None, 3, "routes", [], {"routes": None}, {"routes": [[float("nan")]]},
                                     {"routes": [[[1]]]}, {"routes": [[{"a": 1}]]}, {1: [[1]]}])
def test_garbage_raises_only_infeasible(garbage):
    """Any JSON value raises Infeasible (a ValueError), never another exception."""
    with pytest.raises(Infeasible):
        cvrp.evaluate(_small(), garbage)


# ------------------------------------------------------------- baseline/reference


@pytest.mark.parametrize("size", cvrp.SIZES[:4])
def test_baseline_is_feasible_and_deterministic(size):
    """The baseline is a valid answer, the same every time, one of the 31 fixed splits."""
    inst = cvrp.generate(2, size)
    sol = cvrp.baseline(inst)
    assert sol == cvrp.baseline(json.loads(json.dumps(inst)))
    cvrp.evaluate(inst, sol)
    assert any(sol["routes"] == cvrp.split(inst, cvrp.random_order(inst, i)) for i in range(31))


@pytest.mark.parametrize("seed", [1, 5])
def test_random_answers_score_about_zero(seed):
    """100 random customer orders split by capacity average a reward within 0.15 of 0 (n50)."""
    inst = cvrp.generate(seed, "n50")
    naive = cvrp.evaluate(inst, cvrp.baseline(inst))
    _, meta = cvrp.reference(inst, time_limit_s=1.0, workers=1)
    assert meta["objective"] < naive
    rewards = []
    for k in range(100):
        order = list(range(1, 51))
        random.Random(k).shuffle(order)
        rewards.append(reward(cvrp.evaluate(inst, {"routes": cvrp.split(inst, order)}), naive, meta["objective"]))
    assert abs(sum(rewards) / len(rewards)) <= 0.15


def test_reference_on_small_real_instances():
    """Within 1 s the reference reaches the optima of E-n13-k4 (247) and P-n16-k8 (450)."""
    for name, optimum in (("E-n13-k4", 247), ("P-n16-k8", 450)):
        inst = cvrp.read(FIXTURES / (name + ".vrp"))
        solution, meta = cvrp.reference(inst, time_limit_s=1.0, workers=2)
        assert cvrp.evaluate(inst, solution) == meta["objective"] == optimum
        assert meta["bound"] <= optimum and meta["solver"] == "ortools-routing" and meta["workers"] == 1
        assert meta["metaheuristic"] == "GUIDED_LOCAL_SEARCH" and meta["status"] == "FEASIBLE"


def test_reference_on_x_n101_within_a_few_percent():
    """At 2 s the reference is feasible and within 12% of X-n101-k25's best known 27591."""
    inst = cvrp.read(FIXTURES / "X-n101-k25.vrp")
    solution, meta = cvrp.reference(inst, time_limit_s=2.0, workers=1)
    value = cvrp.evaluate(inst, solution)
    assert value == meta["objective"] <= 27591 * 1.12
    assert meta["bound"] <= 27591 and value <= cvrp.evaluate(inst, cvrp.baseline(inst))


def test_lower_bound_is_valid():
    """The arc bound never exceeds the published optima."""
    for name, optimum in (("X-n101-k25", 27591), ("E-n13-k4", 247), ("P-n16-k8", 450)):
        assert 0 < cvrp.lower_bound(cvrp.read(FIXTURES / (name + ".vrp"))) <= optimum
    assert cvrp.fleet_size(10, 100) == 14 and cvrp.fleet_size(10, 11) == 11
