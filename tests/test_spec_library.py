"""The shipped library of modelling specs (src/orharbor/modelling/specs).

That every golden script writes its required outputs is checked in the sandbox by
tests/test_modelling_specs.py. Here each spec's expected objective is confirmed by an
independent method: brute-force enumeration for the small combinatorial ones,
scipy.optimize (linprog / milp) with a separately written formulation for the others. Where a spec grades decisions (a plan, a set, an order), the test also
shows that the optimum is unique: enumeration, a no-good cut that makes the objective strictly
worse, or minimising and maximising the graded quantity over the LP's optimal face.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.linalg import block_diag
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import lil_matrix

SPECS = Path(__file__).resolve().parents[1] / "src" / "orharbor" / "modelling" / "specs"
SPEC_FILES = sorted(SPECS.glob("*.yaml"))


def load_spec(spec_id: str) -> dict:
    return yaml.safe_load((SPECS / f"{spec_id}.yaml").read_text())


def data_file(spec_id: str, name: str) -> Path:
    return SPECS / "files" / spec_id / name


def read_csv(spec_id: str, name: str) -> list[dict]:
    with data_file(spec_id, name).open(newline="") as f:
        return list(csv.DictReader(f))


def read_json(spec_id: str, name: str):
    return json.loads(data_file(spec_id, name).read_text())


def expected_value(spec_id: str, output: str) -> float:
    expected = load_spec(spec_id)["required_outputs"][output]
    return float(expected["value"]) if isinstance(expected, dict) else float(expected)


def tolerance(expected: dict) -> float:
    return max(float(expected.get("abs_tol", 0.0)), float(expected.get("rel_tol", 0.0)) * abs(float(expected["value"])))


def assert_optimum(spec_id: str, output: str, value: float) -> None:
    """The independently computed optimum matches the spec within the spec's own tolerance."""
    expected = load_spec(spec_id)["required_outputs"][output]
    assert abs(value - float(expected["value"])) <= max(tolerance(expected), 1e-9), (spec_id, value, expected)


def solve_milp(c, rows, lo, hi, integrality, bounds):
    """scipy milp on rows given as a list of {column: coefficient} dicts; returns the result."""
    a = lil_matrix((len(rows), len(c)))
    for r, row in enumerate(rows):
        for col, coef in row.items():
            a[r, col] = coef
    res = milp(
        np.asarray(c, float),
        constraints=LinearConstraint(a.tocsr(), lo, hi),
        integrality=np.asarray(integrality),
        bounds=bounds,
        options={"mip_rel_gap": 1e-9},
    )
    assert res.status == 0, res.message
    return res


# --------------------------------------------------------------------------- the library itself


def test_library_shape():
    assert len(SPEC_FILES) >= 14
    specs = [yaml.safe_load(p.read_text()) for p in SPEC_FILES]
    assert {s["difficulty"] for s in specs} == {"easy", "medium", "hard"}
    assert sum("template" in s for s in specs) >= 8
    pyomo_users = [s["id"] for s in specs if "pyomo" in (SPECS / s["golden_script"]).read_text()]
    assert pyomo_users == ["feed_blending_lp"]
    for spec, path in zip(specs, SPEC_FILES):
        assert spec["id"] == path.stem and re.fullmatch(r"[a-z0-9_]+", spec["id"])
        assert spec["golden_script"] == f"golden/{spec['id']}.py"
        if "template" in spec:
            assert spec["template"] == f"files/{spec['id']}" and (SPECS / spec["template"]).is_dir()
        for name in spec["required_outputs"]:
            assert name in spec["description"], f"{spec['id']}: {name} not named in the description"
        assert 1 <= len(spec["hints"]) <= 2
        for hint in spec["hints"]:
            assert hint["type"] == "legit" and hint["text"] and hint["why_legitimate"]


@pytest.mark.parametrize("spec_file", SPEC_FILES, ids=lambda p: p.stem)
def test_golden_script_does_not_echo_the_answers(spec_file):
    spec = yaml.safe_load(spec_file.read_text())
    source = (SPECS / spec["golden_script"]).read_text()
    for name, expected in spec["required_outputs"].items():
        if isinstance(expected, str):
            assert expected.strip() not in source, f"{name} echoed"
        else:
            value = float(expected["value"])
            forms = {f"{value:g}", f"{value:.2f}", f"{value:.6f}"}
            if value == int(value):
                forms.add(str(int(value)))
            for form in forms:
                assert not re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", source), f"{name}: {form} in source"


# --------------------------------------------------------------------------- independent checks


def lp_face_range(c, a_ub, b_ub, a_eq, b_eq, bounds, optimum, index):
    """min and max of variable `index` over the optimal face of min c.x (objective <= optimum)."""
    a = np.vstack([a_ub, c]) if a_ub is not None else np.asarray([c])
    b = list(b_ub if b_ub is not None else []) + [optimum + 1e-9 * max(1.0, abs(optimum))]
    out = []
    for sign in (1, -1):
        e = np.zeros(len(c))
        e[index] = sign
        res = linprog(e, A_ub=a, b_ub=b, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
        assert res.status == 0
        out.append(res.x[index])
    return out


def test_production_planning_lp_by_scipy_with_unique_plan():
    # variables: tables, chairs, bookcases; maximise profit -> minimise -profit
    c = -np.array([45.0, 20.0, 38.0])
    a_ub = np.array([[4, 2, 3], [2, 1, 4], [20, 8, 15], [2, -1, 0]], float)
    b_ub = [480, 400, 2400, 0]
    bounds = [(0, None), (0, 150), (0, None)]
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0
    assert_optimum("production_planning_lp", "max_profit.txt", -res.fun)
    for index, output in enumerate(["tables.txt", "chairs.txt", "bookcases.txt"]):
        low, high = lp_face_range(c, a_ub, b_ub, None, None, bounds, res.fun, index)
        assert high - low < 1e-4, output
        assert_optimum("production_planning_lp", output, (low + high) / 2)


def test_feed_blending_lp_by_scipy_with_unique_blend():
    sid = "feed_blending_lp"
    ing = read_csv(sid, "ingredients.csv")
    names = [r["ingredient"] for r in ing]
    batch = 2000.0
    c = np.array([float(r["cost_per_kg"]) for r in ing])
    rows, rhs = [], []
    for req in read_csv(sid, "requirements.csv"):
        share = np.array([float(r[req["nutrient"] + "_pct"]) / 100 for r in ing])
        if req["min_pct"]:
            rows.append(-share)
            rhs.append(-float(req["min_pct"]) / 100 * batch)
        if req["max_pct"]:
            rows.append(share)
            rhs.append(float(req["max_pct"]) / 100 * batch)
    rows.append(np.array([1.0 if n in ("wheat", "barley") else 0.0 for n in names]))
    rhs.append(0.4 * batch)
    a_ub, a_eq = np.array(rows), np.ones((1, len(names)))
    bounds = [(0, float(r["stock_kg"])) for r in ing]
    res = linprog(c, A_ub=a_ub, b_ub=rhs, A_eq=a_eq, b_eq=[batch], bounds=bounds, method="highs")
    assert res.status == 0
    assert_optimum(sid, "min_cost.txt", res.fun)
    for name in ("soybean_meal", "limestone"):
        low, high = lp_face_range(c, a_ub, rhs, a_eq, [batch], bounds, res.fun, names.index(name))
        assert high - low < 1e-3, name
        assert_optimum(sid, f"{name}_kg.txt", (low + high) / 2)


def test_transportation_lp_by_scipy():
    sid = "transportation_lp"
    routes = read_csv(sid, "routes.csv")
    plants = read_csv(sid, "plants.csv")
    warehouses = read_csv(sid, "warehouses.csv")
    a_ub = np.array([[r["plant"] == p["plant"] for r in routes] for p in plants], float)
    a_eq = np.array([[r["warehouse"] == w["warehouse"] for r in routes] for w in warehouses], float)
    res = linprog(
        [float(r["cost_per_pallet"]) for r in routes],
        A_ub=a_ub,
        b_ub=[float(p["capacity_pallets"]) for p in plants],
        A_eq=a_eq,
        b_eq=[float(w["demand_pallets"]) for w in warehouses],
        bounds=[(0, float(r["max_pallets"])) for r in routes],
        method="highs",
    )
    assert res.status == 0
    assert_optimum(sid, "min_cost.txt", res.fun)


def test_technician_assignment_by_enumeration_is_unique():
    sid = "technician_assignment"
    with data_file(sid, "minutes.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    jobs = rows[0][1:]
    cost = np.array([[math.inf if c.strip() == "-" else float(c) for c in row[1:]] for row in rows[1:]])
    perms = np.array(list(itertools.permutations(range(len(jobs)))))
    totals = cost[np.arange(len(jobs)), perms].sum(axis=1)
    best = totals.min()
    assert_optimum(sid, "total_minutes.txt", best)
    winners = np.flatnonzero(totals == best)
    assert len(winners) == 1
    assert ",".join(jobs[j] for j in perms[winners[0]]) == load_spec(sid)["required_outputs"]["assignment.txt"]


def test_knapsack_conflicts_by_enumeration_is_unique():
    sid = "knapsack_conflicts"
    data = read_json(sid, "cargo.json")
    items = data["items"]
    index = {it["id"]: i for i, it in enumerate(items)}
    masks = np.arange(1 << len(items), dtype=np.int64)
    weight = np.zeros(len(masks), np.int64)
    volume = np.zeros(len(masks), np.int64)
    value = np.zeros(len(masks), np.int64)
    for i, it in enumerate(items):
        bit = (masks >> i) & 1
        weight += bit * it["weight_kg"]
        volume += bit * it["volume_l"]
        value += bit * it["value"]
    ok = (weight <= data["max_weight_kg"]) & (volume <= data["max_volume_l"])
    for a, b in data["conflicts"]:
        ok &= ((masks >> index[a]) & (masks >> index[b]) & 1) == 0
    value = np.where(ok, value, -1)
    best = value.max()
    assert_optimum(sid, "total_value.txt", best)
    winners = np.flatnonzero(value == best)
    assert len(winners) == 1
    chosen = sorted(it["id"] for i, it in enumerate(items) if winners[0] >> i & 1)
    assert ",".join(chosen) == load_spec(sid)["required_outputs"]["selected_items.txt"]


def test_single_machine_by_enumeration_is_unique():
    sid = "single_machine_weighted_completion"
    # the data of the description's table, parsed from the spec text itself
    table = re.findall(r"\|\s*(J\d)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|", load_spec(sid)["description"])
    assert len(table) == 8
    jobs = [t[0] for t in table]
    release, proc, weight = ([int(t[k]) for t in table] for k in (1, 2, 3))
    results = []
    for order in itertools.permutations(range(len(jobs))):
        time = total = 0
        for j in order:  # left-shifted schedule of the order: optimal for a fixed order
            time = max(time, release[j]) + proc[j]
            total += weight[j] * time
        results.append((total, order))
    best = min(r[0] for r in results)
    winners = [order for total, order in results if total == best]
    assert_optimum(sid, "weighted_completion.txt", best)
    assert len(winners) == 1
    assert ",".join(jobs[j] for j in winners[0]) == load_spec(sid)["required_outputs"]["sequence.txt"]


def no_good_row(chosen: list[int], columns: list[int]) -> tuple[dict, float]:
    """sum_{chosen} x - sum_{others} x <= |chosen| - 1: excludes exactly this 0-1 vector."""
    row = {col: (1.0 if col in chosen else -1.0) for col in columns}
    return row, len(chosen) - 1.0


def test_set_covering_by_scipy_milp_with_unique_set():
    sid = "set_covering_stations"
    sites = read_csv(sid, "sites.csv")
    names = [s["site"] for s in sites]
    travel = {r["zone"]: r for r in read_csv(sid, "travel_minutes.csv")}
    rows, lo = [], []
    for z in read_csv(sid, "zones.csv"):
        rows.append({i: 1.0 for i, s in enumerate(names) if int(travel[z["zone"]][s]) <= 12})
        lo.append(float(z["stations_required"]))
    cost = [float(s["annual_cost"]) for s in sites]
    ones = np.ones(len(names))
    res = solve_milp(cost, rows, lo, [np.inf] * len(rows), ones, Bounds(0, 1))
    assert_optimum(sid, "total_cost.txt", res.fun)
    chosen = [i for i in range(len(names)) if res.x[i] > 0.5]
    assert ",".join(names[i] for i in chosen) == load_spec(sid)["required_outputs"]["stations.txt"]
    row, rhs = no_good_row(chosen, list(range(len(names))))
    other = solve_milp(cost, rows + [row], lo + [-np.inf], [np.inf] * len(rows) + [rhs], ones, Bounds(0, 1))
    assert other.fun > res.fun + 1.0


def test_capacitated_facility_location_by_scipy_milp_with_unique_sites():
    sid = "capacitated_facility_location"
    sites = read_csv(sid, "sites.csv")
    customers = read_csv(sid, "customers.csv")
    unit = {r["customer"]: r for r in read_csv(sid, "unit_costs.csv")}
    n_s, n_c = len(sites), len(customers)

    def x(c, s):  # customer-site assignment column; site columns come first
        return n_s + c * n_s + s

    cost = [float(s["fixed_cost"]) for s in sites]
    cost += [float(cu["demand"]) * float(unit[cu["customer"]][s["site"]]) for cu in customers for s in sites]
    rows, lo, hi = [], [], []
    for c in range(n_c):
        rows.append({x(c, s): 1.0 for s in range(n_s)})
        lo.append(1.0)
        hi.append(1.0)
    for s, site in enumerate(sites):
        row = {x(c, s): float(cu["demand"]) for c, cu in enumerate(customers)}
        row[s] = -float(site["capacity"])
        rows.append(row)
        lo.append(-np.inf)
        hi.append(0.0)
        for c in range(n_c):
            rows.append({x(c, s): 1.0, s: -1.0})
            lo.append(-np.inf)
            hi.append(0.0)
    ones = np.ones(len(cost))
    res = solve_milp(cost, rows, lo, hi, ones, Bounds(0, 1))
    assert_optimum(sid, "total_cost.txt", res.fun)
    opened = [s for s in range(n_s) if res.x[s] > 0.5]
    assert ",".join(sites[s]["site"] for s in opened) == load_spec(sid)["required_outputs"]["open_sites.txt"]
    row, rhs = no_good_row(opened, list(range(n_s)))
    other = solve_milp(cost, rows + [row], lo + [-np.inf], hi + [rhs], ones, Bounds(0, 1))
    assert other.fun > res.fun + 1.0


def test_min_cost_flow_by_scipy_linprog():
    sid = "min_cost_flow_network"
    nodes = read_csv(sid, "nodes.csv")
    arcs = read_csv(sid, "arcs.csv")
    a_eq = np.zeros((len(nodes), len(arcs)))
    row = {n["node"]: i for i, n in enumerate(nodes)}
    for k, a in enumerate(arcs):
        a_eq[row[a["from"]], k] += 1.0
        a_eq[row[a["to"]], k] -= 1.0
    res = linprog(
        [float(a["unit_cost"]) for a in arcs],
        A_eq=a_eq,
        b_eq=[float(n["supply"]) for n in nodes],
        bounds=[(0, float(a["capacity"])) for a in arcs],
        method="highs",
    )
    assert res.status == 0
    assert_optimum(sid, "min_cost.txt", res.fun)


def test_multi_echelon_by_scipy_milp_with_unique_depots():
    sid = "multi_echelon_supply"
    factories = read_csv(sid, "factories.csv")
    depots = read_csv(sid, "depots.csv")
    zones = read_csv(sid, "zones.csv")
    fd = {(r["factory"], r["depot"]): float(r["cost_per_unit"]) for r in read_csv(sid, "factory_depot_costs.csv")}
    dz = {r["zone"]: r for r in read_csv(sid, "depot_zone_costs.csv")}
    n_f, n_d, n_z = len(factories), len(depots), len(zones)
    # columns: open[d] | u[f,d] | v[d,z]
    u = lambda f, d: n_d + f * n_d + d  # noqa: E731
    v = lambda d, z: n_d + n_f * n_d + d * n_z + z  # noqa: E731
    cost = [float(d["fixed_cost"]) for d in depots]
    cost += [float(fa["production_cost"]) + fd[fa["factory"], de["depot"]] for fa in factories for de in depots]
    cost += [float(de["handling_cost"]) + float(dz[zo["zone"]][de["depot"]]) for de in depots for zo in zones]
    rows, lo, hi = [], [], []

    def add(row, low, high):
        rows.append(row)
        lo.append(low)
        hi.append(high)

    for f, fa in enumerate(factories):
        add({u(f, d): 1.0 for d in range(n_d)}, -np.inf, float(fa["capacity"]))
    for d, de in enumerate(depots):
        balance = {u(f, d): 1.0 for f in range(n_f)}
        balance.update({v(d, z): -1.0 for z in range(n_z)})
        add(balance, 0.0, 0.0)
        through = {v(d, z): 1.0 for z in range(n_z)}
        through[d] = -float(de["capacity"])
        add(through, -np.inf, 0.0)
    for z, zo in enumerate(zones):
        add({v(d, z): 1.0 for d in range(n_d)}, float(zo["demand"]), float(zo["demand"]))
    integrality = np.zeros(len(cost))
    integrality[:n_d] = 1
    bounds = Bounds(np.zeros(len(cost)), np.r_[np.ones(n_d), np.full(len(cost) - n_d, np.inf)])
    res = solve_milp(cost, rows, lo, hi, integrality, bounds)
    assert_optimum(sid, "total_cost.txt", res.fun)
    opened = [d for d in range(n_d) if res.x[d] > 0.5]
    assert ",".join(depots[d]["depot"] for d in opened) == load_spec(sid)["required_outputs"]["open_depots.txt"]
    row, rhs = no_good_row(opened, list(range(n_d)))
    other = solve_milp(cost, rows + [row], lo + [-np.inf], hi + [rhs], integrality, bounds)
    assert other.fun > res.fun * (1 + 1e-6)


def test_stochastic_capacity_by_enumerating_first_stage():
    """Every first-stage decision in turn, with the recourse LPs of all scenarios solved in scipy."""
    sid = "stochastic_capacity_planning"
    data = read_json(sid, "capacity.json")
    plants = data["plants"]
    markets = list(data["shortage_penalty"])
    n_p, n_m = len(plants), len(markets)
    unit = {r["plant"]: r for r in data["unit_cost"]}
    penalty = data["shortage_penalty"]
    scenarios = data["scenarios"]
    # one scenario's recourse LP: ship[p, m] (p-major), then short[m]
    c = [float(unit[p["plant"]][m]) for p in plants for m in markets] + [float(penalty[m]) for m in markets]
    a_ub = np.zeros((n_p, n_p * n_m + n_m))
    for p in range(n_p):
        a_ub[p, p * n_m : (p + 1) * n_m] = 1.0
    a_eq = np.zeros((n_m, n_p * n_m + n_m))
    for m in range(n_m):
        a_eq[m, [p * n_m + m for p in range(n_p)]] = 1.0
        a_eq[m, n_p * n_m + m] = 1.0
    # all scenarios side by side (they only share the fixed capacities), weighted by probability
    c_all = np.concatenate([s["probability"] * np.array(c) for s in scenarios])
    a_ub_all = block_diag(*[a_ub] * len(scenarios))
    a_eq_all = block_diag(*[a_eq] * len(scenarios))
    b_eq_all = [s["demand"][m] for s in scenarios for m in markets]
    results = []
    for lines in itertools.product(range(data["max_lines_per_plant"] + 1), repeat=n_p):
        capacity = [n * p["line_capacity"] for n, p in zip(lines, plants)]
        res = linprog(
            c_all, A_ub=a_ub_all, b_ub=capacity * len(scenarios), A_eq=a_eq_all, b_eq=b_eq_all, method="highs"
        )
        assert res.status == 0
        results.append((sum(n * p["line_cost"] for n, p in zip(lines, plants)) + res.fun, lines))
    results.sort()
    assert_optimum(sid, "expected_cost.txt", results[0][0])
    assert results[1][0] > results[0][0] + 1.0  # unique first-stage decision
    assert ",".join(map(str, results[0][1])) == load_spec(sid)["required_outputs"]["lines.txt"]


def test_cutting_stock_by_bound_and_explicit_plan():
    """Lower bound: total length / stock length, rounded up. Upper bound: a plan with that many
    bars, found by a pattern IP in scipy and checked bar by bar."""
    sid = "cutting_stock"
    data = read_json(sid, "orders.json")
    length = data["stock_length_cm"]
    pieces = [o["length_cm"] for o in data["orders"]]
    quantity = [o["quantity"] for o in data["orders"]]
    bound = math.ceil(sum(p * q for p, q in zip(pieces, quantity)) / length)
    patterns = [
        counts
        for counts in itertools.product(*[range(min(q, length // p) + 1) for p, q in zip(pieces, quantity)])
        if any(counts) and sum(k * p for k, p in zip(counts, pieces)) <= length
    ]
    rows = [{j: float(pat[i]) for j, pat in enumerate(patterns) if pat[i]} for i in range(len(pieces))]
    res = solve_milp(
        np.ones(len(patterns)),
        rows,
        [float(q) for q in quantity],
        [np.inf] * len(pieces),
        np.ones(len(patterns)),
        Bounds(0, np.inf),
    )
    plan = [patterns[j] for j in range(len(patterns)) for _ in range(round(res.x[j]))]
    for bar in plan:
        assert sum(k * p for k, p in zip(bar, pieces)) <= length
    for i, q in enumerate(quantity):
        assert sum(bar[i] for bar in plan) >= q
    assert len(plan) == bound
    assert_optimum(sid, "bars.txt", bound)


def test_lot_sizing_by_scipy_milp():
    sid = "lot_sizing_mip"
    data = read_json(sid, "plan.json")
    n_t, prods = data["weeks"], data["products"]
    n_p = len(prods)
    # columns per (p, t): produce, stock, setup
    col = lambda p, t, k: 3 * (p * n_t + t) + k  # noqa: E731
    n = 3 * n_p * n_t
    cost = np.zeros(n)
    integrality = np.zeros(n)
    upper = np.full(n, np.inf)
    rows, lo, hi = [], [], []
    for p, pr in enumerate(prods):
        for t in range(n_t):
            cost[col(p, t, 1)] = pr["holding_cost"]
            cost[col(p, t, 2)] = pr["setup_cost"]
            integrality[col(p, t, 2)] = 1
            upper[col(p, t, 2)] = 1
            # stock[t] - stock[t-1] - produce[t] = -demand[t]   (stock[-1] = initial inventory)
            row = {col(p, t, 1): 1.0, col(p, t, 0): -1.0}
            rhs = -pr["demand"][t]
            if t:
                row[col(p, t - 1, 1)] = -1.0
            else:
                rhs += pr["initial_inventory"]
            rows.append(row)
            lo.append(rhs)
            hi.append(rhs)
            # produce <= (total demand of the horizon) * setup
            rows.append({col(p, t, 0): 1.0, col(p, t, 2): -float(sum(pr["demand"]))})
            lo.append(-np.inf)
            hi.append(0.0)
    for t in range(n_t):
        row = {}
        for p, pr in enumerate(prods):
            row[col(p, t, 0)] = pr["unit_hours"]
            row[col(p, t, 2)] = pr["setup_hours"]
        rows.append(row)
        lo.append(-np.inf)
        hi.append(data["capacity_hours"][t])
    res = solve_milp(cost, rows, lo, hi, integrality, Bounds(np.zeros(n), upper))
    assert_optimum(sid, "total_cost.txt", res.fun)


def test_unit_commitment_by_scipy_milp():
    """A separately written formulation: explicit start and stop binaries, stop-start balance as
    an equation, minimum up/down as 'a start in the window forces on' per hour pair."""
    sid = "unit_commitment"
    data = read_json(sid, "grid.json")
    units, demand, n_h = data["units"], data["demand_mw"], data["hours"]
    n_g = len(units)
    # columns per (g, h): on, start, stop, power
    col = lambda g, h, k: 4 * (g * n_h + h) + k  # noqa: E731
    n = 4 * n_g * n_h
    cost = np.zeros(n)
    integrality = np.zeros(n)
    upper = np.ones(n)
    rows, lo, hi = [], [], []

    def add(row, low, high):
        rows.append(row)
        lo.append(low)
        hi.append(high)

    for g, u in enumerate(units):
        for h in range(n_h):
            on, start, stop, power = (col(g, h, k) for k in range(4))
            cost[on], cost[start], cost[power] = u["no_load_cost_per_hour"], u["startup_cost"], u["energy_cost_per_mwh"]
            integrality[[on, start, stop]] = 1
            upper[power] = u["max_mw"]
            add({power: 1.0, on: -u["min_mw"]}, 0.0, np.inf)
            add({power: 1.0, on: -u["max_mw"]}, -np.inf, 0.0)
            # on[h] - on[h-1] = start[h] - stop[h]
            row = {on: 1.0, start: -1.0, stop: 1.0}
            if h:
                row[col(g, h - 1, 0)] = -1.0
                add(row, 0.0, 0.0)
            else:
                prev = 1.0 if u["on_at_start"] else 0.0
                add(row, prev, prev)
            add({start: 1.0, stop: 1.0}, -np.inf, 1.0)
            # a start in hour s keeps the unit on through s + min_up - 1; a stop keeps it off
            for later in range(h + 1, min(n_h, h + u["min_up_hours"])):
                add({col(g, later, 0): 1.0, start: -1.0}, 0.0, np.inf)
            for later in range(h + 1, min(n_h, h + u["min_down_hours"])):
                add({col(g, later, 0): 1.0, stop: 1.0}, -np.inf, 1.0)
    for h in range(n_h):
        add({col(g, h, 3): 1.0 for g in range(n_g)}, demand[h], demand[h])
        online = {col(g, h, 0): float(u["max_mw"]) for g, u in enumerate(units)}
        add(online, (1 + data["reserve_fraction"]) * demand[h], np.inf)
    res = solve_milp(cost, rows, lo, hi, integrality, Bounds(np.zeros(n), upper))
    assert_optimum(sid, "total_cost.txt", res.fun)
