"""The retail model (orharbor.modelling.retail.model) against the 38 RetailOpt-190 v0 references,
and the prompt helpers of orharbor.modelling.retail.prompts.

Every scenario is solved once, in one worker process per integer scenario (each solve uses
one thread; the integer scenarios go first, side by side): the 35 LPs take well under a second each, far inside their
limit, and are asserted exactly: status OPTIMAL and the reference's objective within the
published tolerance (1e-4 relative). The three integer archetypes of family F6 (MOQ, fixed
order cost, pack size) run fix-and-optimize until MIP_TIME_LIMIT_S and end at the time
limit: HiGHS does not close their gap in minutes, so what they reach depends on the CPU time
the run gets (a loaded machine stopped the MOQ row at 512019, above the 1% the reference
allows). Their tests assert only what holds at any limit (see
test_integer_rows_hold_what_any_time_limit_gives). The whole file takes about 40 seconds
on a 2-core machine.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from types import SimpleNamespace

import pytest

from orharbor.modelling.retail import model as retail_model
from orharbor.modelling.retail.prompts import archetype, extract_data, family

from once_per_run import once_per_run

#: The scenarios of ../shared/data/retailopt190/v0.jsonl (v0 of every archetype), named here so the
#: tests exist, and skip, in a clone without that file; ``records`` checks the file holds exactly these.
IDS = [
    "retail_f1_52_weeks_v0",
    "retail_f1_base_v0",
    "retail_f1_high_waste_v0",
    "retail_f1_jit_logic_v0",
    "retail_f2_cannibalization_v0",
    "retail_f2_circular_sub_v0",
    "retail_f2_no_substitution_v0",
    "retail_f2_price_band_tight_v0",
    "retail_f2_promo_budget_v0",
    "retail_f2_ultra_fresh_v0",
    "retail_f3_storage_bottleneck_v0",
    "retail_f3_supply_bottleneck_v0",
    "retail_f3_unbalanced_network_v0",
    "retail_f3_volumetric_constraint_v0",
    "retail_f4_demand_surge_v0",
    "retail_f4_early_stockout_v0",
    "retail_f4_peak_failure_v0",
    "retail_f4_quality_hold_v0",
    "retail_f4_robust_variance_v0",
    "retail_f4_supply_risk_v0",
    "retail_f5_impossible_demand_v0",
    "retail_f5_storage_overflow_v0",
    "retail_f5_strict_service_trap_v0",
    "retail_f5_ultimate_stress_v0",
    "retail_f6_fixed_order_cost_v0",
    "retail_f6_lead_time_v0",
    "retail_f6_moq_binary_v0",
    "retail_f6_pack_size_integer_v0",
    "retail_f7_budget_limit_v0",
    "retail_f7_hub_and_spoke_v0",
    "retail_f7_multi_sourcing_v0",
    "retail_f7_multiechelon_chain_v0",
    "retail_f7_ring_routing_v0",
    "retail_f7_transshipment_v0",
    "retail_f8_labor_constraint_v0",
    "retail_f8_reverse_logistics_v0",
    "retail_f8_ship_from_store_v0",
    "retail_f8_sustainability_v0",
]
#: The integer scenarios: HiGHS does not close their gap, the model returns its best at the limit.
#: What was measured on each (plans and HiGHS bounds) says why nothing about their objective beyond
#: what holds at any limit can be asserted.
MIP_ROWS = {
    "retail_f6_moq_binary_v0": (
        "MOQ 300 on 300 orders: the reference 506120.72 is not optimal (Gurobi stopped at its 1% MIP "
        "gap); the model finds 504266.75 after about 60 CPU seconds, HiGHS's bound is 501481 after "
        "150 s; under a busy CPU the timed run stopped anywhere from 504267 to 512019"
    ),
    "retail_f6_fixed_order_cost_v0": (
        "fixed cost 5000 on 300 orders: best plan 753227.38 (reference 755550.05), HiGHS bound "
        "742095 after 150 s (gap 1.5%)"
    ),
    "retail_f6_pack_size_integer_v0": (
        "packs of 100 on 300 orders: best plan 398633.65 (reference 399680.25), HiGHS bound 395566 "
        "(gap 0.8%) after 150 s; proven within 1% at the oracle's 300 s, not always at 75 s"
    ),
}
LP_IDS = [i for i in IDS if i not in MIP_ROWS]
#: The LPs solve in well under a second: this limit is far above what any of them needs.
LP_TIME_LIMIT_S = 300.0
#: What the integer rows assert holds at any limit that gives a plan; with the three side by side on two
#: cores each had a plan after 5 s, so 30 s leaves a wide margin for a loaded machine.
MIP_TIME_LIMIT_S = 30.0
#: What the solve of an integer row may take beyond its limit: the task's own margin between the
#: model's limit and the run's (RETAIL_RUN_LIMIT_S - RETAIL_TIME_LIMIT_S, 360 - 300 s). Generous on
#: purpose: it catches a solve that ignores its limit, not a slow machine.
MIP_OVERRUN_S = 60.0


def _solve(record: dict) -> tuple[dict, float]:
    data = extract_data(record["en_question"])
    limit = MIP_TIME_LIMIT_S if record["scenario_id"] in MIP_ROWS else LP_TIME_LIMIT_S
    start = time.monotonic()
    result = retail_model.solve(data, limit)
    return result, time.monotonic() - start


@pytest.fixture(scope="module")
def records(retail_v0) -> dict[str, dict]:
    """scenario id -> its record in v0.jsonl, in the file's order."""
    lines = retail_v0.read_text(encoding="utf-8").splitlines()
    found = {r["scenario_id"]: r for r in (json.loads(line) for line in lines if line.strip())}
    assert list(found) == IDS
    return found


@pytest.fixture(scope="module")
def results(records, tmp_path_factory, worker_id) -> dict[str, tuple[dict, float]]:
    """scenario id -> (the model's answer, seconds), solved once per test run (:mod:`once_per_run`)."""

    def solve_all() -> dict[str, tuple[dict, float]]:
        order = sorted(records.values(), key=lambda r: r["scenario_id"] not in MIP_ROWS)  # long ones first
        # one process per integer row: they all run to their (wall-clock) limit side by side, so the file takes
        # one limit rather than two; on 2 cores each gets less CPU, and what they assert holds at any CPU time
        with ProcessPoolExecutor(max_workers=len(MIP_ROWS), mp_context=multiprocessing.get_context("spawn")) as pool:
            return dict(zip([r["scenario_id"] for r in order], pool.map(_solve, order)))

    return once_per_run(tmp_path_factory, worker_id, "retail-model-results", solve_all)


@pytest.mark.slow
@pytest.mark.parametrize("scenario_id", LP_IDS)
def test_objective_matches_reference(records, results, scenario_id):
    result, _ = results[scenario_id]
    want = float(records[scenario_id]["en_answer"])
    assert result["objective"] is not None, result
    assert abs(result["objective"] - want) <= 1e-4 * abs(want), (result, want)


@pytest.mark.slow
@pytest.mark.parametrize("scenario_id", LP_IDS)
def test_status_is_optimal(results, scenario_id):
    assert results[scenario_id][0]["status"] == "OPTIMAL"


def test_a_plan_within_the_reference_gap_counts_as_optimal():
    """The references' criterion (Gurobi at a 1% MIP gap): a time-limited plan proven within
    OPTIMAL_GAP is OPTIMAL, one outside it or without a bound stays TIME_LIMIT."""
    within = retail_model._within_gap
    Run = retail_model._Run
    assert within(Run("TIME_LIMIT", 1000.0, None, None), [995.0, None], 0.01).status == "OPTIMAL"
    assert within(Run("TIME_LIMIT", 1000.0, None, None), [985.0, 989.0], 0.01).status == "TIME_LIMIT"
    assert within(Run("TIME_LIMIT", 1000.0, None, None), [985.0, 991.0], 0.01).status == "OPTIMAL"
    assert within(Run("TIME_LIMIT", 1000.0, None, None), [None], 0.01).status == "TIME_LIMIT"
    assert within(Run("INFEASIBLE", None, None, None), [1.0], 0.01).status == "INFEASIBLE"
    assert retail_model.OPTIMAL_GAP == 0.01


def _hinted_model():
    """A model whose integer x is fixed at 3 and a plan hint that puts it at 4 (what a stale incumbent
    gives a sub-MIP of fix-and-optimize), with q = 5 x + 2 z >= 17.5: optimum 21 (x 3, z 2, q 19)."""
    from ortools.math_opt.python import mathopt

    m = mathopt.Model()
    x = m.add_integer_variable(lb=3, ub=3, name="x")
    z = m.add_integer_variable(lb=0, ub=10, name="z")
    q = m.add_variable(lb=0, ub=100, name="q")
    m.add_linear_constraint(q == 5 * x + 2 * z)
    m.add_linear_constraint(q >= 17.5)
    m.minimize(q + z)
    return retail_model.Built(model=m, order_keys=[], ints={"x": x, "z": z}), {x: 4.0, z: 2.0000001, q: 24.0}


def test_a_hint_outside_the_bounds_is_brought_inside_them():
    """HiGHS fails a whole solve (kError) on a hint outside a variable's bounds, which a sub-MIP's
    fixed orders meet whenever the incumbent moved them; the hint is rounded and clipped first.
    (Without ``_within_bounds`` this solve ends in ERROR: a published pack-size variant lost 40 s of
    its minute that way and ended 2% above its reference.)"""
    built, hint = _hinted_model()
    x, z, q = (built.model.get_variable(i) for i in range(3))
    assert retail_model._within_bounds(hint) == {x: 3.0, z: 2.0, q: 24.0}
    run = retail_model._highs(built, 30.0, 1e-9, hint=hint)
    assert run.status == "OPTIMAL" and run.objective == pytest.approx(21.0)


def test_a_solver_failure_is_a_run_without_a_plan_not_a_crash(monkeypatch):
    """An exception out of MathOpt (HiGHS's kError surfaces as one) ends that run with ERROR and no
    plan; ``solve`` goes on with what it has and answers."""
    from ortools.math_opt.python import mathopt

    built, hint = _hinted_model()

    def broken(*args, **kwargs):
        raise AttributeError("'StatusNotOk' object has no attribute 'canonical_code'")

    monkeypatch.setattr(mathopt, "solve", broken)
    assert retail_model._highs(built, 30.0, 1e-9, hint=hint) == retail_model._Run("ERROR", None, None, None)


def _fixed_cost_model(records):
    data = extract_data(records["retail_f6_fixed_order_cost_v0"]["en_question"])
    return retail_model.build(retail_model.parse(data))


def test_every_continuous_variable_belongs_to_the_items_it_models(records):
    """A local sub-MIP pins what belongs to no chosen item (p, l); a variable without an owner would stay
    free and the sub-MIP would be the whole model again."""
    built = _fixed_cost_model(records)
    ints = set(built.ints.values())
    assert set(built.owner) | ints == set(built.model.variables()) and not set(built.owner) & ints
    for v, items in built.owner.items():
        if v.name[:2] in ("Q[", "I[", "y[", "W[", "L["):
            assert items == (tuple(v.name[2:].split(",")[:2]),), v.name


def test_a_local_sub_mip_frees_only_its_items_and_every_bound_comes_back(records, monkeypatch):
    """With ``local``, the solve sees every variable of the other items fixed at the incumbent's value
    (the sub-MIP is the chosen item alone); afterwards each bound is what the model had."""
    built = _fixed_cost_model(records)
    before = {v: (v.lower_bound, v.upper_bound) for v in built.model.variables()}
    nothing = retail_model._fixed(built, lambda key: False, None, 30.0)
    item = built.order_keys[0][:2]
    seen = {}
    solve = retail_model._highs

    def spy(built_, *args, **kwargs):
        seen.update({v: (v.lower_bound, v.upper_bound) for v in built_.model.variables()})
        return solve(built_, *args, **kwargs)

    monkeypatch.setattr(retail_model, "_highs", spy)
    run = retail_model._fixed(built, lambda key: key[:2] == item, nothing, 30.0, local=True)
    assert run.objective < nothing.objective  # ordering for that item pays
    for v, items in built.owner.items():
        pinned = seen[v][0] == seen[v][1] == pytest.approx(nothing.values[v], abs=1e-9)
        assert pinned == (set(items) != {item}) or (pinned and before[v][0] == before[v][1]), v.name
    for key, v in built.ints.items():
        assert (seen[v] == (0.0, built.upper[v])) == (key[:2] == item) or built.upper[v] == 0.0, key
    assert {v: (v.lower_bound, v.upper_bound) for v in built.model.variables()} == before


@pytest.mark.slow
def test_fixed_costs_get_local_sub_mips_and_moq_and_packs_whole_model_ones(records, monkeypatch):
    """Fix-and-optimize's phases: with fixed order costs alone local sub-MIPs over the small and wide
    blocks, then whole-model ones over the small blocks; with an MOQ or packs whole-model ones over the
    small blocks only (local ones ended 0.2-0.4% higher there)."""
    calls = []

    def record(built, families, local, best, *rest):
        calls.append((len(families), local))
        return best  # no improvement: one round of phases, then the end

    def no_solver(built, *args, **kwargs):  # every solve ends at once with a plan: no timing involved
        return retail_model._Run("TIME_LIMIT", 1.0, None, {v: 0.0 for v in built.ints.values()})

    monkeypatch.setattr(retail_model, "_improve", record)
    monkeypatch.setattr(retail_model, "_highs", no_solver)
    for scenario_id in ("retail_f6_fixed_order_cost_v0", "retail_f6_moq_binary_v0", "retail_f6_pack_size_integer_v0"):
        retail_model.solve(extract_data(records[scenario_id]["en_question"]), 3600.0)
    # fixed cost: local over all six families, then whole-model over the four small; MOQ, packs: the latter
    assert calls == [(6, True), (4, False), (4, False), (4, False)]


@pytest.mark.slow
def test_set_up_costs_alone_skip_the_first_and_final_branch_and_bound(records, monkeypatch):
    """With fixed order costs alone the search gets the time of the first branch and bound (its root LP
    outlasts it) and of the final one but a second (neither closes a 2.5% gap); with an MOQ or packs the
    first runs max(2, min(10, 5% of the limit)) seconds and the final one keeps 10% of the limit."""
    first, search = {}, {}

    def no_solver(built, time_limit_s, rel_gap, hint=None, log=False, options=None):
        if hint is None and options is None:  # a branch and bound of the whole model
            first.setdefault(scenario_id, []).append(round(time_limit_s))
        return retail_model._Run("TIME_LIMIT", 1.0, None, {v: 0.0 for v in built.ints.values()})

    def improve(built, families, local, best, left, *rest):
        search[scenario_id] = round(left())  # what the search may spend
        return best

    monkeypatch.setattr(retail_model, "_improve", improve)
    monkeypatch.setattr(retail_model, "_highs", no_solver)
    monkeypatch.setattr(retail_model, "time", SimpleNamespace(monotonic=lambda: 0.0))  # no time passes
    for scenario_id in ("retail_f6_fixed_order_cost_v0", "retail_f6_moq_binary_v0", "retail_f6_pack_size_integer_v0"):
        retail_model.solve(extract_data(records[scenario_id]["en_question"]), 60.0)
    assert first == {"retail_f6_moq_binary_v0": [3], "retail_f6_pack_size_integer_v0": [3]}
    assert search == {
        "retail_f6_fixed_order_cost_v0": 59,
        "retail_f6_moq_binary_v0": 54,
        "retail_f6_pack_size_integer_v0": 54,
    }


def test_window_cuts_are_added_without_an_moq_only(records):
    """With an MOQ the facility-location cuts carry the bound and the window cuts would triple each LP's
    time: they are left out there, and kept for packs and fixed order costs."""

    def windows(scenario_id: str) -> int:
        built = retail_model.build(retail_model.parse(extract_data(records[scenario_id]["en_question"])))
        return sum(c.name.startswith("window[") for c in built.model.linear_constraints())

    assert windows("retail_f6_moq_binary_v0") == 0
    assert windows("retail_f6_fixed_order_cost_v0") > 0 and windows("retail_f6_pack_size_integer_v0") > 0


@pytest.mark.slow
@pytest.mark.parametrize("scenario_id", sorted(MIP_ROWS))
def test_integer_rows_hold_what_any_time_limit_gives(records, results, scenario_id):
    """Stopped at its time limit, an integer row's plan depends on the CPU time it got, so only what
    holds at any limit is asserted: a plan, never below the optimum's floor, and never above what
    its own status claims.

    The reference comes from Gurobi stopped at a 1% MIP gap, so the optimum is at least
    0.99 x the reference: a plan below that would mean the model's added inequalities cut off
    feasible plans. A plan reported OPTIMAL is proven within OPTIMAL_GAP of a valid bound,
    itself at most the optimum and hence the reference: it costs at most reference / 0.99.
    """
    result, seconds = results[scenario_id]
    want = float(records[scenario_id]["en_answer"])
    gap = retail_model.OPTIMAL_GAP
    assert result["status"] in ("OPTIMAL", "TIME_LIMIT") and result["objective"] is not None, result
    assert result["objective"] >= want * (1 - gap) * (1 - 1e-6), (result, want, MIP_ROWS[scenario_id])
    if result["status"] == "OPTIMAL":
        assert result["objective"] <= want / (1 - gap) * (1 + 1e-6), (result, want, MIP_ROWS[scenario_id])
    assert seconds <= MIP_TIME_LIMIT_S + MIP_OVERRUN_S


@pytest.mark.slow
def test_only_the_integer_archetypes_have_integer_orders(records):
    """The 35 LP scenarios build models without integer variables (one LP solve, no branch and bound,
    hence their sub-second solves); MIP_ROWS, the rows that run to their limit, are exactly the others."""
    integer = {
        i
        for i, record in records.items()
        if retail_model.build(retail_model.parse(extract_data(record["en_question"]))).ints
    }
    assert integer == set(MIP_ROWS)


def test_cli_writes_the_answer(records, tmp_path):
    record = records["retail_f1_base_v0"]
    data = tmp_path / "data.json"
    data.write_text(json.dumps(extract_data(record["en_question"])))
    answer = tmp_path / "answer.json"
    done = subprocess.run(
        [sys.executable, retail_model.__file__, str(data), str(answer), "--time-limit", "30"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(answer.read_text())
    assert set(got) == {"status", "objective"} and got["status"] == "OPTIMAL"
    assert got["objective"] == pytest.approx(378951.5, rel=1e-9)


def test_bad_data_say_what_is_wrong(records):
    data = extract_data(records["retail_f1_base_v0"]["en_question"])
    for broken, message in (
        ({k: v for k, v in data.items() if k != "shelf_life"}, "missing key 'shelf_life'"),
        (dict(data, periods=0), "periods: expected a positive integer"),
        (dict(data, shelf_life=dict(data["shelf_life"], SKU_Basic=2.5)), "shelf_life.SKU_Basic"),
        (dict(data, network={"sub_edges": [["SKU_Basic", "SKU_Nope"]]}), "network.sub_edges[0]"),
    ):
        with pytest.raises(retail_model.DataError, match=message.replace("[", r"\[").replace("]", r"\]")):
            retail_model.solve(broken, 5)


def test_infeasible_data_report_infeasible(records):
    data = extract_data(records["retail_f1_base_v0"]["en_question"])
    # a waste limit below zero cannot be met
    result = retail_model.solve(dict(data, constraints=dict(data["constraints"], waste_limit_pct=-0.1)), 30)
    assert result == {"status": "INFEASIBLE", "objective": None}


# ----------------------------------------------------------------------------- prompts.py


def test_extract_data_reads_every_prompt(records):
    for record in records.values():
        data = extract_data(record["en_question"])
        assert data["name"] == record["scenario_id"] and isinstance(data["periods"], int)


@pytest.mark.parametrize(
    "prompt, message",
    [
        ("no data here", "no \\[DATA\\] section"),
        ("[DATA]\nsee the attached file\n[TASK]\n```json\n{}\n```", "has no ```json"),
        ('[DATA]\n```json\n{"periods": 20,}\n```', "does not parse"),
        ("[DATA]\n```json\n[1, 2]\n```", "is a list, expected an object"),
    ],
)
def test_extract_data_says_what_is_missing(prompt, message):
    with pytest.raises(ValueError, match=message):
        extract_data(prompt)


def test_archetype_and_family():
    assert archetype("retail_f6_pack_size_integer_v0") == "retail_f6_pack_size_integer"
    assert archetype("retail_f6_pack_size_integer") == "retail_f6_pack_size_integer"
    assert family("retail_f6_pack_size_integer_v3") == "F6"
    assert archetype("retail_f1_52_weeks_v0") == "retail_f1_52_weeks" and family("retail_f1_52_weeks_v0") == "F1"
    with pytest.raises(ValueError, match="no RetailOpt archetype"):
        archetype("Solve this knapsack problem.")


def test_archetype_and_family_of_every_published_prompt(records):
    for record in records.values():
        prompt = record["en_question"]
        assert archetype(prompt) == archetype(record["scenario_id"])
        assert f"Family: {family(prompt)} " in prompt
