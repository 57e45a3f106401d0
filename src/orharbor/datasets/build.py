"""build-dataset: one JSONL row per episode, references and baselines precomputed.

Every instance of every row is solved once by the problem's OR-Tools reference
and once by its naive baseline, in a process pool; both answers pass through
the problem's own verifier before they are stored, so a row never carries a
value the verifier would not reproduce.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from functools import cache
from pathlib import Path

from orharbor import problem_modules
from orharbor.datasets.rows import read_rows
from orharbor.errors import UserError

#: Level-2 evaluation seeds live far from the level-1 seeds, so a level-2 eval
#: instance is never also a level-1 instance of the same dataset.
EVAL_SEED_BASE = 1_000_000


class UnknownSize(UserError):
    """A size that is not one of the problem class's sizes."""


def solve_instance(problem: str, instance: dict, time_limit_s: float, workers: int, seed: int = 0) -> dict:
    """Reference and baseline of one instance, both checked by the verifier."""
    module = problem_modules.get(problem)
    cpu_start = time.process_time()
    base = module.baseline(instance)
    base_obj = module.evaluate(instance, base)
    ref, meta = module.reference(instance, time_limit_s=time_limit_s, workers=workers, seed=seed)
    ref_obj = module.evaluate(instance, ref)
    if ref_obj > base_obj:  # a reference must never be worse than naive
        ref, ref_obj = base, base_obj
        meta = dict(meta, status=f"{meta.get('status')}_WORSE_THAN_BASELINE", objective=base_obj)
    # Provenance: the machine, and whether the solver got past the naive answer (a reference that is only its
    # hint, or stopped before its first improvement, makes every answer score +1 or -1).
    meta = dict(meta, cpu=cpu_model(), cpu_time_s=round(time.process_time() - cpu_start, 3),
                improved_on_baseline=ref_obj < base_obj or str(meta.get("status")) == "OPTIMAL")
    return {"reference": ref_obj, "reference_solution": ref, "reference_meta": meta,
            "baseline": base_obj, "baseline_solution": base}


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


def _solve_generated(problem: str, size: str, seed: int, time_limit_s: float, workers: int) -> dict:
    module = problem_modules.get(problem)
    return solve_instance(problem, module.generate(seed, size), time_limit_s, workers)


def row_id(problem: str, size: str, level: int, seed: int) -> str:
    """A generated row's id: its class, size, level and (first) instance seed."""
    return f"{problem}-{size}-l{level}-s{seed}"


def plan_rows(problem: str, sizes: list[str], level: int, num_rows: int, *, start_seed: int = 0,
              eval_instances: int = 4, solve_time_limit_s: float = 10.0,
              reference_time_limit_s: float = 60.0) -> list[dict]:
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
        row = {"id": row_id(problem, size, level, seed), "problem": problem, "size": size,
               "level": level, "generator_version": module.GENERATOR_VERSION, "instance_seed": seed,
               "reference_time_limit_s": reference_time_limit_s}
        if level == 2:
            row["eval_seeds"] = [EVAL_SEED_BASE + seed * eval_instances + j for j in range(eval_instances)]
            row["solve_time_limit_s"] = solve_time_limit_s
        rows.append(row)
    return rows


def build_dataset(problem: str, sizes: list[str], level: int, num_rows: int, *,
                  reference_time_limit_s: float = 60.0, solver_workers: int = 1,
                  workers: int | None = None, start_seed: int = 0, eval_instances: int = 4,
                  solve_time_limit_s: float = 10.0, min_gap: float = 0.0) -> list[dict]:
    """Plan the rows, solve every instance on a local process pool, return validated rows.

    The same engine as ``orharbor build-dataset`` (:mod:`orharbor.datasets.engine`),
    with its journal and output in a temporary folder.
    """
    from orharbor.datasets.engine import BuildPlan, run_build
    from orharbor.datasets.pools import LocalPool

    plan = BuildPlan(problem, tuple(sizes), level, num_rows, reference_time_limit_s, solver_workers, start_seed,
                     eval_instances, solve_time_limit_s, min_gap)
    plan_rows(problem, list(sizes), level, 1)  # a bad size or level fails before any process starts
    with tempfile.TemporaryDirectory(prefix="orharbor-build-") as folder:
        out = Path(folder) / "rows.jsonl"
        run_build(plan, out, LocalPool(workers or os.cpu_count() or 1))
        return read_rows(out)


def attach_eval(row: dict, solved: list[dict]) -> None:
    """Store the solved evaluation instances of a level-2 row, in eval_seeds order."""
    for key in ("reference", "baseline", "reference_solution", "baseline_solution"):
        row[f"eval_{key}s"] = [s[key] for s in solved]
    row["eval_reference_metas"] = [s["reference_meta"] for s in solved]


def complete_row(row: dict, reference_time_limit_s: float = 60.0, solver_workers: int = 1) -> dict:
    """Fill in a row's missing references and baselines (export time; needs OR-Tools)."""
    problem = row["problem"]
    module = problem_modules.get(problem)
    if row["level"] == 1:
        if "reference" not in row or "baseline" not in row:
            instance = row.get("instance") or module.generate(row["instance_seed"], row["size"])
            row.update(solve_instance(problem, instance, reference_time_limit_s, solver_workers))
    elif "eval_references" not in row or "eval_baselines" not in row:
        attach_eval(row, [solve_instance(problem, module.generate(seed, row["size"]), reference_time_limit_s,
                                         solver_workers) for seed in row["eval_seeds"]])
    return row
