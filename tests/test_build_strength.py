"""A strengthened build: references started from the ladder's best answer, and a best-known value per instance.

What is asserted holds at any time limit: the reference is never worse than
the answer it started from, the best known is the best of every answer seen
(each stored answer scores its value under the verifier), its bound is below
it, and the long best-known run is skipped where it cannot change the answer.
"""

from __future__ import annotations

import pytest

from orharbor import problem_modules
from orharbor.benchmark.recipe import parse_recipe
from orharbor.datasets import build
from orharbor.datasets.build import Strength, best_known_of, solve_instance
from orharbor.datasets.engine import BuildPlan, run_build
from orharbor.datasets.pools import LocalPool
from orharbor.datasets.rows import read_rows

#: A short ladder and best-known run: enough to exercise every path, far from deciding any result.
QUICK = Strength(ladder_budget_s=0.3, best_known_time_limit_s=0.5, best_known_workers=1)


def check_best_known(module, instance: dict, result: dict) -> None:
    """The invariants every strengthened solve keeps, whatever its solvers found in their time."""
    meta, known = result["reference_meta"], result["best_known"]
    assert set(known) == {"value", "source", "bound"}
    ladder = [v for k, v in meta["ladder"].items() if k != "budget_s" and v is not None]
    assert ladder, "the ladder programs ran and answered"
    # the reference started from the ladder's best answer, so it is never worse than any rung
    assert result["reference"] <= min(ladder)
    assert known["value"] <= result["reference"] <= result["baseline"]
    assert known["bound"] is None or known["bound"] <= known["value"]
    if "best_known_solution" in result:
        assert module.evaluate(instance, result["best_known_solution"]) == known["value"]
    else:
        assert known["source"] == "reference" and known["value"] == result["reference"]


@pytest.mark.parametrize("problem", problem_modules.names())
def test_a_strengthened_solve_keeps_the_best_of_every_answer(problem):
    module = problem_modules.get(problem)
    instance = module.generate(3, module.SIZES[1] if len(module.SIZES) > 1 else module.SIZES[0])
    result = solve_instance(problem, instance, 0.5, 1, strength=QUICK)
    check_best_known(module, instance, result)
    meta = result["reference_meta"]
    assert meta["hint"]["from"] in ("ladder rule", "ladder search") or meta["hint"]["objective"] <= min(
        v for k, v in meta["ladder"].items() if k != "budget_s" and v is not None
    ), meta["hint"]
    assert meta["time_limit_s"] == 0.5
    if meta["solver"] == "ortools-cp-sat" and problem_modules.one_thread_portfolio(problem):
        # one thread: CP-SAT's interleaved portfolio, LNS included
        assert meta["parameters"] == {"interleave_search": True, "subsolvers": ["default_lp"]}
    elif meta["solver"] == "ortools-cp-sat":  # a class that keeps the single search (rostering)
        assert "parameters" not in meta
    assert "parameters" not in module.reference(instance, time_limit_s=0.2, workers=1)[1]


def test_the_best_known_run_is_skipped_for_a_proven_optimum_and_a_literature_value(monkeypatch):
    module = problem_modules.get("jobshop")
    instance = module.generate(0, "4x4")
    solution, meta = module.reference(instance, time_limit_s=5, workers=1)
    objective = module.evaluate(instance, solution)
    ran = []
    monkeypatch.setattr(build, "_strong_run", lambda *a, **k: ran.append(a) or (solution, {"solver": "x"}))
    answers = {"reference": (solution, objective)}
    for meta_, literature in (
        (dict(meta, status="OPTIMAL"), None),
        (dict(meta, status="FEASIBLE"), {"value": objective, "source": "lit", "bound": 1}),
    ):
        out = best_known_of("jobshop", module, instance, answers, meta_, QUICK, literature, 0)
        assert out["best_known"]["value"] == objective
    assert ran == []
    out = best_known_of("jobshop", module, instance, answers, dict(meta, status="FEASIBLE"), QUICK, None, 0)
    assert len(ran) == 1 and "best_known_run" in out["reference_meta"]


def test_a_literature_value_wins_unless_an_answer_beats_it():
    module = problem_modules.get("jobshop")
    instance = module.generate(0, "4x4")
    solution = module.baseline(instance)
    objective = module.evaluate(instance, solution)
    answers = {"reference": (solution, objective)}
    meta = {"status": "FEASIBLE", "bound": 1}
    lower = best_known_of(
        "jobshop",
        module,
        instance,
        answers,
        meta,
        Strength(),
        {"value": objective - 1, "source": "the literature", "bound": objective - 3},
        0,
    )["best_known"]
    assert lower == {"value": objective - 1, "source": "the literature", "bound": objective - 3}
    higher = best_known_of(
        "jobshop",
        module,
        instance,
        answers,
        meta,
        Strength(),
        {"upper_bound": objective + 5, "lower_bound": 2, "source": "old shape"},
        0,
    )["best_known"]
    assert higher == {"value": objective, "source": "reference", "bound": 2}


@pytest.mark.slow
def test_strengthened_rows_of_both_levels_validate_and_carry_their_best_known(tmp_path):
    module = problem_modules.get("wtardiness")
    for level in (1, 2):
        plan = BuildPlan(
            "wtardiness",
            ("n8",),
            level,
            2,
            0.5,
            1,
            0,
            2,
            5.0,
            ladder_budget_s=QUICK.ladder_budget_s,
            best_known_time_limit_s=QUICK.best_known_time_limit_s,
        )
        out = tmp_path / f"l{level}.jsonl"
        run_build(plan, out, LocalPool(2))
        for row in read_rows(out):
            if level == 1:
                check_best_known(module, module.generate(row["instance_seed"], "n8"), row)
                continue
            assert len(row["eval_best_known"]) == len(row["eval_seeds"])
            assert row["reference_workload_s"] > 0  # the machine the level-2 limits were built on
            for i, seed in enumerate(row["eval_seeds"]):
                result = {
                    "reference": row["eval_references"][i],
                    "baseline": row["eval_baselines"][i],
                    "reference_meta": row["eval_reference_metas"][i],
                    "best_known": row["eval_best_known"][i],
                }
                solutions = row.get("eval_best_known_solutions") or [None] * len(row["eval_seeds"])
                if solutions[i] is not None:
                    result["best_known_solution"] = solutions[i]
                check_best_known(module, module.generate(seed, "n8"), result)


def test_a_plan_without_strength_keeps_the_journal_key_of_earlier_builds():
    plain = BuildPlan("jobshop", ("4x4",), 1, 2, 1.0)
    assert not {"ladder_budget_s", "best_known_time_limit_s", "best_known_workers"} & set(plain.key())
    assert plain.cores == 1
    strong = BuildPlan(
        "jobshop", ("4x4",), 1, 2, 1.0, ladder_budget_s=10, best_known_time_limit_s=60, best_known_workers=2
    )
    assert strong.key()["ladder_budget_s"] == 10 and strong.key()["best_known_workers"] == 2
    assert strong.cores == 2


RECIPE = """
name = "t"
version = "1.1"
[build]
reference_time_limit_s = 60.0
solver_workers = 1
start_seed = 0
min_gap = 0.0
eval_instances = 3
ladder_budget_s = 10
best_known_time_limit_s = 120
[export]
[[tiers]]
problem = "jobshop"
size = "15x15"
level1_rows = 2
level2_rows = 1
solve_time_limit_s = 30
agent_timeout_s = 3600
reference_time_limit_s = 300
eval_instances = 5
best_known_time_limit_s = 0
[[tiers]]
problem = "rcpsp"
size = "j30"
level1_rows = 2
level2_rows = 0
solve_time_limit_s = 30
agent_timeout_s = 3600
"""


def test_a_recipe_sets_the_ladder_start_and_per_tier_limits():
    parts = {part.name: part.plan for part in parse_recipe(RECIPE).parts}
    l1, l2, other = parts["jobshop-15x15-l1"], parts["jobshop-15x15-l2"], parts["rcpsp-j30-l1"]
    assert (l1.reference_time_limit_s, l1.best_known_time_limit_s, l1.ladder_budget_s) == (300.0, 0.0, 10.0)
    assert l2.eval_instances == 5
    assert (other.reference_time_limit_s, other.best_known_time_limit_s, other.eval_instances) == (60.0, 120.0, 3)


def test_the_instruction_names_the_ladder_start_of_a_strengthened_row_only():
    from orharbor.exporter.algorithm import ladder_start_text

    strengthened = {"level": 1, "reference_meta": {"ladder": {"budget_s": 10.0, "rule": 5, "search": 4}}}
    assert "10-second local search" in ladder_start_text(strengthened)
    assert ladder_start_text({"level": 1, "reference_meta": {"status": "FEASIBLE"}}) == ""
    level2 = {"level": 2, "eval_reference_metas": [{}, {"ladder": {"budget_s": 5.0}}]}
    assert "5-second" in ladder_start_text(level2)


def test_a_strengthened_one_thread_solve_runs_cp_sats_interleaved_portfolio(monkeypatch):
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat

    model = cp_model.CpModel()
    x = model.new_int_var(0, 5, "x")
    model.maximize(x)
    with cpsat.parameters(interleave_search=True):
        solver, _, meta = cpsat.solve(model, time_limit_s=5, workers=1, seed=0)
    assert solver.parameters.interleave_search and meta["parameters"] == {"interleave_search": True}
    solver, _, meta = cpsat.solve(model, time_limit_s=5, workers=1, seed=0)
    assert not solver.parameters.interleave_search and "parameters" not in meta
    with cpsat.parameters(subsolvers=["default_lp"]):  # a repeated field is extended, not assigned
        solver, _, meta = cpsat.solve(model, time_limit_s=5, workers=1, seed=0)
    assert list(solver.parameters.subsolvers) == ["default_lp"] and meta["parameters"] == {"subsolvers": ["default_lp"]}

    seen = []
    real = cpsat.solve
    monkeypatch.setattr(cpsat, "solve", lambda *a, **k: seen.append(dict(cpsat._EXTRA)) or real(*a, **k))
    module = problem_modules.get("jobshop")
    solve_instance("jobshop", module.generate(1, "6x6"), 0.5, 1, strength=QUICK)
    assert seen and all(extra == {"interleave_search": True, "subsolvers": ["default_lp"]} for extra in seen)
    seen.clear()
    solve_instance("jobshop", module.generate(1, "6x6"), 0.5, 1)
    assert seen == [{}]
    rostering = problem_modules.get("rostering")  # ONE_THREAD_PORTFOLIO = False
    assert not problem_modules.one_thread_portfolio("rostering") and problem_modules.one_thread_portfolio("jobshop")
    result = solve_instance("rostering", rostering.generate(1, rostering.SIZES[0]), 0.5, 1, strength=QUICK)
    assert seen[1:] and all(extra == {} for extra in seen[1:]) and "parameters" not in result["reference_meta"]
