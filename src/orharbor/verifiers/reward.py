"""The reward of DESIGN.md: how far an objective moved from naive towards reference.

``reward = (naive - objective) / (naive - reference)``, clipped below at -1.0.
1.0 matches the reference, above 1.0 beats it, 0.0 is no better than naive.
Every failure (infeasible, missing, crashed, timed out) scores ``FAIL``.
"""

from __future__ import annotations

import math

FAIL = -1.0


def reward(objective: float | None, naive: float, reference: float) -> float:
    """Reward of a feasible ``objective`` (``None`` means no valid answer)."""
    if objective is None or not _finite(objective) or not _finite(naive) or not _finite(reference):
        return FAIL
    if naive <= reference:
        # No room between naive and reference: matching the reference is all there is.
        return 1.0 if objective <= reference else FAIL
    value = (naive - objective) / (naive - reference)
    return max(FAIL, float(value))


def best_reward(naive: float, reference: float) -> float:
    """The highest reward a task can give: that of an objective of 0 (every objective is >= 0), or 1.0 when
    there is no room between naive and reference."""
    return naive / (naive - reference) if naive > reference else 1.0


def objective_at(value: float, naive: float, reference: float) -> float:
    """The objective that earns the reward ``value`` (the formula read backwards; naive > reference)."""
    return naive - value * (naive - reference)


def mean_reward(rewards: list[float]) -> float:
    """Level-2 reward: the mean over evaluation instances (FAIL when there are none)."""
    return sum(rewards) / len(rewards) if rewards else FAIL


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
