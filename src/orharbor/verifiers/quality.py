"""The quality figure: how close an answer comes to the best value known for its instance, the same for every class.

Per instance, ``min(1, max(best_known, 1) / max(objective, 1))`` for a feasible answer, and 0.0 for an
infeasible, missing or failed one; a level-2 task's figure is the mean over its evaluation instances.

It is HeuriGym's per-instance QUALITY (Chen et al., "HeuriGym: An Agentic Benchmark for LLM-Crafted
Heuristics in Combinatorial Optimization", ICLR 2026, arXiv:2506.07972): ``min(1, c* / c)``, the best
(expert) cost over the answer's cost, capped at 1. Where this one differs, and why:

- a failure counts 0.0 and stays in the mean. HeuriGym averages over the feasible instances only and
  reports their share (YIELD) apart; a reward needs one number for every trial, and a figure that falls
  with each failure is what compares agents across classes. The level-2 mean is HeuriGym's QUALITY x YIELD.
- values below 1 count as 1, the floor of the report's gaps (``max(|best known|, 1)``). Objectives are
  >= 0 in every class; a best known value of 0 (a penalty whose soft constraints can all be met) would
  otherwise score every answer that is not optimal 0.0, as a failure. With the floor, penalty 4 there
  scores 0.25, and an objective of 0 scores 1.0.
- the cap at 1.0 (HeuriGym's too) is kept: an answer below the stored best known value, which a strong
  agent can reach, scores 1.0, not more. The figure stays in [0, 1], so every instance weighs alike in a
  class mean, and an instance whose optimum is near 0 cannot swamp it (best / objective has no bound
  there). Beating the best known value still shows: as a negative ``gap_best`` in ``orharbor report``,
  and in orharbor's reward, which has no cap; the row's best known value should then be lowered to it.

Standard library only: copied into every task's ``tests/``.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence


def quality(objective: float | None, best_known: float | None) -> float:
    """The quality of one answer: 0.0 when it has no feasible objective (None, or not a finite number).

    A best known value that is not a finite number (None included) raises ValueError.
    """
    if best_known is None or not _finite(best_known):
        raise ValueError(f"best known value {best_known!r} is not a finite number")
    if objective is None or not _finite(objective):
        return 0.0
    return min(1.0, max(float(best_known), 1.0) / max(float(objective), 1.0))


def mean_quality(values: Iterable[float]) -> float:
    """Level 2: the mean over the evaluation instances (0.0 when there are none)."""
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def add_quality(details: dict[str, Any], best_knowns: Sequence[float], level: int) -> dict[str, Any]:
    """``details`` (the verifier's) with the best known value and quality of each instance, and the task's quality.

    Level 1: ``best_known`` and ``quality`` beside the objective. Level 2: each
    instance's row gets both (rows are matched by their ``index``), and
    ``quality`` is the mean over every hidden instance, one without a row
    (solve.py could not be read) counting 0.0.
    """
    if level == 1:
        details["best_known"] = best_knowns[0]
        details["quality"] = quality(_feasible_objective(details), best_knowns[0])
        return details
    figures = [0.0] * len(best_knowns)
    for row in details.get("instances") or []:
        index = row.get("index")
        if isinstance(index, int) and 0 <= index < len(best_knowns):
            row["best_known"] = best_knowns[index]
            row["quality"] = figures[index] = quality(_feasible_objective(row), best_knowns[index])
    details["quality"] = mean_quality(figures)
    return details


def _feasible_objective(figures: dict[str, Any]) -> float | None:
    return figures.get("objective") if figures.get("feasible") else None


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
