"""Reward scales: the number a task's reward.json holds for a reward on orharbor's own scale.

``orharbor`` is the verifier's reward as DESIGN.md defines it (algorithm
tasks: failure -1.0, naive 0.0, reference 1.0, above 1.0 beats it; modelling
tasks: 1.0 correct, 0.0 not). ``unit`` is the scale RL trainers assume, where
nothing earned is 0: the kind's failure reward maps to 0.0 and the reference
to 1.0, linearly, ``(reward - fail) / (1 - fail)``. For an algorithm task that
is ``(reward + 1) / 2`` (naive 0.5); a modelling task's 0/1 reward is
unchanged. A reward above the reference stays above 1.0 on ``unit``: the room
above the reference is the benchmark's signal, and a positive affine map keeps
every ranking and every group-normalised advantage a trainer computes.

``quality`` is the quality figure of :mod:`orharbor.verifiers.quality`
(best known value over objective, capped at 1; failure 0.0), for algorithm
tasks that know the best value of every instance. It is no function of the
orharbor reward, which anchors on naive and the reference: the verifier
computes it from the objectives, and only the failure maps between the two
scales here (:class:`NotOnTheReward` for anything else).

Standard library only: copied into every task's ``tests/``.
"""

from __future__ import annotations

#: The scales an export may write, the default first.
SCALES = ("orharbor", "unit", "quality")
DEFAULT = SCALES[0]
QUALITY = "quality"


class UnknownScale(ValueError):
    """A reward scale that is not one of :data:`SCALES`."""


class NotOnTheReward(ValueError):
    """A quality-scale figure asked of (or about) an orharbor reward that is not the failure reward."""


def check_scale(scale: object) -> str:
    """``scale`` if it is one of :data:`SCALES`; UnknownScale naming the known ones otherwise."""
    if scale not in SCALES:
        raise UnknownScale(f"reward scale must be one of {', '.join(SCALES)}, got {scale!r}")
    return scale


def to_scale(reward: float, scale: str, fail: float) -> float:
    """``reward`` (orharbor's scale, of a kind whose failure reward is ``fail``) on ``scale``.

    On ``quality`` only the failure reward (or below) has a value, 0.0: see the module's docstring.
    """
    scale = check_scale(scale)
    if scale == "unit":
        return (float(reward) - fail) / (1.0 - fail)
    if scale == QUALITY:
        if float(reward) <= fail:
            return 0.0
        raise NotOnTheReward(f"the quality of a reward of {reward:g} depends on the objectives behind it")
    return float(reward)


def from_scale(value: float, scale: str, fail: float) -> float:
    """The orharbor-scale reward that :func:`to_scale` maps to ``value``: its exact inverse.

    On ``quality`` a figure of 0.0 (or below) is the failure reward; any other has no single inverse.
    """
    scale = check_scale(scale)
    if scale == "unit":
        return float(value) * (1.0 - fail) + fail
    if scale == QUALITY:
        if float(value) <= 0.0:
            return fail
        raise NotOnTheReward(f"a quality of {value:g} says nothing of the orharbor reward behind it")
    return float(value)
