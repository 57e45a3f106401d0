"""Variants v1-v4 of the RetailOpt-190 F6 archetypes, made by the benchmark's perturbation rule
(orharbor.modelling.retailopt.perturb), and what the retail model proves on them.

The rule: every demand_curve entry times its own factor in [0.85, 1.15], truncated to an integer;
every cold_capacity times one such factor; nothing else changes. The published seeds cannot be
reproduced (Python's salted string hash), so the variants here use seeds 1-4.

Nothing here depends on a time limit: the LP relaxations are solved to optimality.
"""

from __future__ import annotations

import json
import math

import pytest

from orharbor.modelling import retailopt
from orharbor.modelling.retail import model as retail_model
from orharbor.modelling.retail.prompts import extract_data

F6 = ("retail_f6_fixed_order_cost", "retail_f6_lead_time", "retail_f6_moq_binary", "retail_f6_pack_size_integer")
SEEDS = (1, 2, 3, 4)


@pytest.fixture(scope="module")
def v0(retail_v0) -> dict[str, dict]:
    """archetype -> its v0 data."""
    records = [json.loads(line) for line in retail_v0.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["scenario_id"][:-3]: extract_data(r["en_question"]) for r in records}


def test_every_f6_archetype_of_v0_is_covered(v0):
    assert {a for a in v0 if a.startswith("retail_f6_")} == set(F6)


@pytest.mark.parametrize("archetype", F6)
def test_variants_follow_the_perturbation_rule(v0, archetype):
    base = v0[archetype]
    low, high = 1 - retailopt.PERTURBATION, 1 + retailopt.PERTURBATION
    ratios = []
    for seed in SEEDS:
        made = retailopt.perturb(base, seed, name=f"{archetype}_v{seed}")
        assert made["name"] == f"{archetype}_v{seed}"
        assert {k: v for k, v in made.items() if k not in ("demand_curve", "cold_capacity", "name")} == {
            k: v for k, v in base.items() if k not in ("demand_curve", "cold_capacity", "name")
        }
        for p in base["products"]:
            assert len(made["demand_curve"][p]) == len(base["demand_curve"][p])
            for old, new in zip(base["demand_curve"][p], made["demand_curve"][p]):
                assert isinstance(new, int) and math.floor(old * low) <= new <= math.floor(old * high)
                ratios.append(new / old if old else 1.0)
        for loc in base["locations"]:
            ratio = made["cold_capacity"][loc] / base["cold_capacity"][loc]
            assert low <= ratio <= high
            ratios.append(ratio)
    # the factors spread over the interval: neither a constant nor one-sided
    assert min(ratios) < 0.9 and max(ratios) > 1.1
    assert base == v0[archetype]  # the v0 data are left alone


def test_variants_are_deterministic_in_the_seed(v0):
    base = v0["retail_f6_fixed_order_cost"]
    assert retailopt.perturb(base, 7) == retailopt.perturb(base, 7)
    assert retailopt.perturb(base, 7) != retailopt.perturb(base, 8)
    assert retailopt.perturb(base, 7, intensity=0.0) == base


def _lp_bound(data: dict, strengthen: bool = True) -> float:
    """The optimal value of the model's LP relaxation (integer orders relaxed), with or without
    the valid inequalities of ``_strengthen``."""
    inst = retail_model.parse(data)
    if strengthen:
        built = retail_model.build(inst)
    else:
        original = retail_model._strengthen
        retail_model._strengthen = lambda *args, **kwargs: None
        try:
            built = retail_model.build(inst)
        finally:
            retail_model._strengthen = original
    for v in built.ints.values():
        v.integer = False
    run = retail_model._highs(built, 3600.0, 1e-9)
    assert run.status == "OPTIMAL", run
    return run.objective


def _no_orders_cost(data: dict) -> float:
    """The cost of a feasible plan (no order placed: every demand lost), an upper bound of the optimum."""
    built = retail_model.build(retail_model.parse(data))
    run = retail_model._fixed(built, lambda key: False, None, 3600.0)
    assert run.status == "OPTIMAL", run
    return run.objective


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_cost_variants_lp_bound_is_valid_and_strong(v0, seed):
    """The valid inequalities never cut off a plan (the bound stays below a feasible plan's cost)
    and carry the fixed cost the big-M relaxation drops: the plain LP bound is below 60% of the
    tightened one (about 52% on seed 1)."""
    data = retailopt.perturb(v0["retail_f6_fixed_order_cost"], seed)
    tight = _lp_bound(data)
    assert tight <= _no_orders_cost(data)
    assert _lp_bound(data, strengthen=False) < 0.6 * tight


@pytest.mark.slow
def test_fixed_cost_v0_lp_bound_is_within_3_percent_of_the_reference(v0, retail_v0):
    """On v0, whose reference plan (Gurobi) is feasible, the tightened LP bound lies at most 3% below it."""
    record = next(
        json.loads(line) for line in retail_v0.read_text().splitlines() if '"retail_f6_fixed_order_cost_v0"' in line
    )
    reference = float(record["en_answer"])
    tight = _lp_bound(v0["retail_f6_fixed_order_cost"])
    assert 0.97 * reference <= tight <= reference


@pytest.mark.parametrize("seed", SEEDS)
def test_lead_time_variants_solve_to_optimality(v0, seed):
    """F6 lead time is an LP: its variants solve to OPTIMAL at a limit far above what they need,
    and the LP has no integer orders."""
    data = retailopt.perturb(v0["retail_f6_lead_time"], seed)
    assert not retail_model.build(retail_model.parse(data)).ints
    result = retail_model.solve(data, 600.0)
    assert result["status"] == "OPTIMAL" and result["objective"] > 0
