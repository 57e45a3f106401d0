"""build-dataset: one JSONL row per episode, references and baselines precomputed.

Every instance of every row is solved once by the problem's OR-Tools reference
and once by its naive baseline, in a process pool; both answers pass through
the problem's own verifier before they are stored, so a row never carries a
value the verifier would not reproduce.

This module holds the pieces of a build: the row plan, one instance's solve,
and the rows' completion at export time. The engine that journals and runs
the solves (:mod:`orharbor.datasets.engine`) builds on it; nothing here
imports the engine.
"""

from __future__ import annotations

import platform
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

from orharbor import problem_modules
from orharbor.errors import UserError

#: Level-2 evaluation seeds live far from the level-1 seeds, so a level-2 eval
#: instance is never also a level-1 instance of the same dataset.
EVAL_SEED_BASE = 1_000_000


class UnknownSize(UserError):
    """A size that is not one of the problem class's sizes."""


@dataclass(frozen=True)
class Strength:
    """How hard a build works on each instance beyond the reference's own time limit (all off: as 1.0 built).

    ``ladder_budget_s`` > 0 runs the class's ladder programs first (the rule, then
    the local search for that many seconds) and hands the best answer to the
    reference as its starting point, so no reference is weaker than them.
    ``best_known_time_limit_s`` > 0 then runs the class's strongest open solver
    (its ``strong.py``, else its reference model) with ``best_known_workers``
    threads from the best answer so far, unless the reference is proven optimal
    or a literature value exists. Every answer seen feeds the row's ``best_known``.
    """

    ladder_budget_s: float = 0.0
    best_known_time_limit_s: float = 0.0
    best_known_workers: int = 1

    @property
    def on(self) -> bool:
        return self.ladder_budget_s > 0 or self.best_known_time_limit_s > 0


def solve_instance(
    problem: str,
    instance: dict,
    time_limit_s: float,
    workers: int,
    seed: int = 0,
    strength: Strength = Strength(),
    literature: dict | None = None,
) -> dict:
    """Reference and baseline of one instance, both checked by the verifier; with ``strength``, its best known too.

    ``literature`` is a published instance's best known value (``{"value", "source", "bound"}``, or the older
    ``{"upper_bound", "lower_bound", ...}``): it is kept as the best known unless an answer here beats it.
    """
    module = problem_modules.get(problem)
    cpu_start = time.process_time()
    base = module.baseline(instance)
    base_obj = module.evaluate(instance, base)
    ladder = (
        _ladder_answers(problem, module, instance, strength.ladder_budget_s) if strength.ladder_budget_s > 0 else {}
    )
    start_policy = min(ladder, key=lambda p: ladder[p][1]) if ladder else None
    ref_cpu_start = time.process_time()
    with _cpsat_profile(strength, workers, problem) as applied:
        ref, meta = module.reference(
            instance,
            time_limit_s=time_limit_s,
            workers=workers,
            seed=seed,
            **({"hint": ladder[start_policy][0]} if start_policy else {}),
        )
    if applied and meta.get("solver") == "ortools-cp-sat":  # some classes build their meta themselves
        meta = dict(meta, parameters=applied)
    ref_cpu_s = time.process_time() - ref_cpu_start
    ref_obj = module.evaluate(instance, ref)
    if ref_obj > base_obj:  # a reference must never be worse than naive
        ref, ref_obj = base, base_obj
        meta = dict(meta, status=f"{meta.get('status')}_WORSE_THAN_BASELINE", objective=base_obj)
    if start_policy and isinstance(meta.get("hint"), dict) and meta["hint"].get("from") == "given":
        meta = dict(meta, hint=dict(meta["hint"], **{"from": f"ladder {start_policy}"}))
    if strength.ladder_budget_s > 0:
        meta = dict(
            meta,
            ladder={
                "budget_s": strength.ladder_budget_s,
                **{p: ladder[p][1] if p in ladder else None for p in LADDER_POLICIES},
            },
        )
    # Provenance: the machine, and whether the solver got past the naive answer (a reference that is only its
    # hint, or stopped before its first improvement, makes every answer score +1 or -1). cpu_time_s is the
    # baseline's and the reference's (not the ladder's, which runs in child processes), so cpu_time_s /
    # wall_time_s tells whether the reference had its cores.
    meta = dict(
        meta,
        cpu=cpu_model(),
        cpu_time_s=round(ref_cpu_start - cpu_start + ref_cpu_s, 3),
        improved_on_baseline=ref_obj < base_obj or str(meta.get("status")) == "OPTIMAL",
    )
    result = {
        "reference": ref_obj,
        "reference_solution": ref,
        "reference_meta": meta,
        "baseline": base_obj,
        "baseline_solution": base,
    }
    if strength.on or literature:
        answers = {"reference": (ref, ref_obj), **{f"ladder {p}": ladder[p] for p in ladder}}
        result.update(best_known_of(problem, module, instance, answers, meta, strength, literature, seed))
    return result


@contextmanager
def _cpsat_profile(strength: Strength, workers: int, problem: str):
    """A strengthened build's one-thread CP-SAT solves run CP-SAT's interleaved portfolio.

    One CP-SAT worker runs a single search and no large-neighbourhood search,
    and from a good start it barely moves (a 15x15 job shop from 3305: 3305
    after 60 s); ``interleave_search`` runs every subsolver, LNS included, in
    that one thread (3142, bound 2845, 59.6 CPU-s in 59.5 s). Other builds, and
    solves with several workers (CP-SAT's parallel portfolio), are left as they are.

    Its full-problem subsolvers are cut to ``default_lp``: with all eight
    interleaved, OR-Tools 9.13 to 9.15 corrupts its heap now and then
    (google/or-tools#5048; a 40-job weighted tardiness reference crashed in 5 of
    7 runs, 0 of 10 with ``default_lp`` alone). The LNS subsolvers, which do the
    improving, all stay (that 15x15: 3143 against 3152 with all eight).

    A class whose module sets ``ONE_THREAD_PORTFOLIO = False`` keeps the single
    search (rostering: its own search from the ladder's answer does far better).
    """
    if not strength.on or workers != 1 or not problem_modules.one_thread_portfolio(problem):
        yield {}
        return
    from orharbor.problem_modules import cpsat

    applied = {"interleave_search": True, "subsolvers": ["default_lp"]}
    with cpsat.parameters(**applied):
        yield applied


#: The ladder rungs a strengthened build runs before the reference, weakest first.
LADDER_POLICIES = ("rule", "search")


def _ladder_answers(problem: str, module, instance: dict, budget_s: float) -> dict[str, tuple[dict, float]]:
    """The feasible answers of the class's ladder programs on ``instance``: policy -> (answer, objective).

    A program that fails or answers infeasibly is left out (the reference then
    starts from its own hint): the ladder helps the reference, it never decides it.
    """
    from orharbor.problem_modules.ladder_programs import LadderError, answer_of

    found = {}
    for policy in LADDER_POLICIES:
        try:
            answer = answer_of(problem, policy, budget_s, instance)
            found[policy] = (answer, module.evaluate(instance, answer))
        except (LadderError, ValueError, TypeError, KeyError):
            continue
    return found


def best_known_of(
    problem: str,
    module,
    instance: dict,
    answers: dict[str, tuple[dict, float]],
    meta: dict,
    strength: Strength,
    literature: dict | None,
    seed: int,
) -> dict:
    """``best_known`` (value, source, bound) of one instance, and the answer behind it where it is not the reference.

    The best of every feasible answer seen (``answers``: source -> (answer,
    objective)), of a longer run of the class's strongest open solver (skipped
    when the reference is proven optimal or a literature value exists), and of
    the literature value; the bound is the best proven lower bound of any of them.
    """
    bounds = [meta.get("bound")]
    best_source = min(answers, key=lambda k: answers[k][1])
    runs = {}
    proven = str(meta.get("status")) == "OPTIMAL"
    if strength.best_known_time_limit_s > 0 and not proven and not literature:
        solution, run_meta = _strong_run(problem, module, instance, answers[best_source][0], strength, seed)
        objective = module.evaluate(instance, solution)
        source = (
            f"{run_meta.get('solver')} {run_meta.get('version')} ({strength.best_known_time_limit_s:g} s, "
            f"{strength.best_known_workers} worker{'s' if strength.best_known_workers > 1 else ''})"
        )
        answers = dict(answers, **{source: (solution, objective)})
        bounds.append(run_meta.get("bound"))
        runs = {"best_known_run": {k: v for k, v in run_meta.items() if k not in ("hint",)}}
        best_source = min(answers, key=lambda k: answers[k][1])
    value = answers[best_source][1]
    out: dict = {}
    if literature:
        lit_value = literature.get("value", literature.get("upper_bound"))
        bounds.append(literature.get("bound", literature.get("lower_bound")))
        if lit_value is not None and lit_value <= value:
            best_source, value = literature.get("source", "literature"), lit_value
    known = [b for b in bounds if isinstance(b, (int, float)) and not isinstance(b, bool)]
    bound = min(max(known), value) if known else None
    out["best_known"] = {"value": value, "source": best_source, "bound": bound}
    if best_source in answers and best_source != "reference":
        out["best_known_solution"] = answers[best_source][0]
    if runs:
        out["reference_meta"] = dict(meta, **runs)
    return out


def _strong_run(problem: str, module, instance: dict, hint: dict, strength: Strength, seed: int):
    """The class's strongest open solver from ``hint``: its ``strong.py`` (PyVRP for routing), else its reference."""
    solve = problem_modules.strong_solver(problem) or module.reference
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    with _cpsat_profile(strength, strength.best_known_workers, problem) as applied:
        solution, meta = solve(
            instance,
            time_limit_s=strength.best_known_time_limit_s,
            workers=strength.best_known_workers,
            seed=seed + 1,
            hint=hint,
        )
    if applied and meta.get("solver") == "ortools-cp-sat":
        meta = dict(meta, parameters=applied)
    return solution, dict(
        meta,
        cpu_time_s=round(time.process_time() - cpu_start, 3),
        wall_time_s=round(time.perf_counter() - wall_start, 3),
    )


@cache
def cpu_model() -> str:
    """The CPU's model name (Linux), else what the platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def solve_generated(
    problem: str, size: str, seed: int, time_limit_s: float, workers: int, strength: Strength = Strength()
) -> dict:
    """:func:`solve_instance` of the instance ``seed`` generates at ``size``: one solve of a build, in a pool."""
    module = problem_modules.get(problem)
    return solve_instance(problem, module.generate(seed, size), time_limit_s, workers, strength=strength)


def row_id(problem: str, size: str, level: int, seed: int) -> str:
    """A generated row's id: its class, size, level and (first) instance seed."""
    return f"{problem}-{size}-l{level}-s{seed}"


def plan_rows(
    problem: str,
    sizes: list[str],
    level: int,
    num_rows: int,
    *,
    start_seed: int = 0,
    eval_instances: int = 4,
    solve_time_limit_s: float = 10.0,
    reference_time_limit_s: float = 60.0,
) -> list[dict]:
    """Row skeletons (ids, seeds) with sizes assigned round-robin."""
    module = problem_modules.get(problem)
    unknown = [s for s in sizes if s not in module.SIZES]
    if unknown:
        raise UnknownSize(f"unknown size {unknown[0]!r} for {problem}; sizes: {', '.join(module.SIZES)}")
    if level not in (1, 2):
        raise ValueError(f"level must be 1 or 2, got {level}")
    rows = []
    for i in range(num_rows):
        size, seed = sizes[i % len(sizes)], start_seed + i
        row = {
            "id": row_id(problem, size, level, seed),
            "problem": problem,
            "size": size,
            "level": level,
            "generator_version": module.GENERATOR_VERSION,
            "instance_seed": seed,
            "reference_time_limit_s": reference_time_limit_s,
        }
        if level == 2:
            row["eval_seeds"] = [EVAL_SEED_BASE + seed * eval_instances + j for j in range(eval_instances)]
            row["solve_time_limit_s"] = solve_time_limit_s
        rows.append(row)
    return rows


def attach_eval(row: dict, solved: list[dict]) -> None:
    """Store the solved evaluation instances of a level-2 row, in eval_seeds order."""
    for key in ("reference", "baseline", "reference_solution", "baseline_solution"):
        row[f"eval_{key}s"] = [s[key] for s in solved]
    row["eval_reference_metas"] = [s["reference_meta"] for s in solved]
    if any("best_known" in s for s in solved):
        row["eval_best_known"] = [s["best_known"] for s in solved]
        if any("best_known_solution" in s for s in solved):
            row["eval_best_known_solutions"] = [s.get("best_known_solution") for s in solved]


def complete_row(row: dict, reference_time_limit_s: float = 60.0, solver_workers: int = 1) -> dict:
    """Fill in a row's missing references and baselines (export time; needs OR-Tools)."""
    problem = row["problem"]
    module = problem_modules.get(problem)
    if row["level"] == 1:
        if "reference" not in row or "baseline" not in row:
            instance = row.get("instance") or module.generate(row["instance_seed"], row["size"])
            row.update(solve_instance(problem, instance, reference_time_limit_s, solver_workers))
    elif "eval_references" not in row or "eval_baselines" not in row:
        attach_eval(
            row,
            [
                solve_instance(problem, module.generate(seed, row["size"]), reference_time_limit_s, solver_workers)
                for seed in row["eval_seeds"]
            ],
        )
    return row
