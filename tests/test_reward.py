"""The reward of DESIGN.md: (naive - objective) / (naive - reference), clipped at -1.0."""

from __future__ import annotations

import math

import pytest

from orharbor.verifiers.reward import FAIL, mean_reward, reward

NAIVE, REFERENCE = 1192, 849


def formula(objective: float, naive: float = NAIVE, reference: float = REFERENCE) -> float:
    """The reward of DESIGN.md written out independently, for comparison."""
    return max(-1.0, (naive - objective) / (naive - reference))


def test_fail_is_minus_one():
    """A failure scores -1.0, the floor of every reward."""
    assert FAIL == -1.0


def test_matching_reference_scores_one():
    """An objective equal to the reference scores exactly 1.0."""
    assert reward(REFERENCE, NAIVE, REFERENCE) == 1.0


def test_equal_to_naive_scores_zero():
    """An objective equal to the naive baseline scores exactly 0.0."""
    assert reward(NAIVE, NAIVE, REFERENCE) == 0.0


@pytest.mark.parametrize("objective", [REFERENCE - 1, REFERENCE - 100, 0])
def test_beating_reference_scores_above_one(objective):
    """An objective below the reference scores above 1.0, as the formula says (no upper clip)."""
    value = reward(objective, NAIVE, REFERENCE)
    assert value > 1.0
    assert value == pytest.approx(formula(objective))


@pytest.mark.parametrize("objective", [1000, 900, 1100, 1300, 1500])
def test_between_and_slightly_worse_follow_formula(objective):
    """Objectives in the unclipped range score the formula's value (negative when worse than naive)."""
    expected = formula(objective)
    assert expected > -1.0  # the cases are chosen inside the unclipped range
    assert reward(objective, NAIVE, REFERENCE) == pytest.approx(expected)


@pytest.mark.parametrize("objective", [NAIVE + 2 * (NAIVE - REFERENCE), 10**6, 10.0**300])
def test_much_worse_than_naive_is_clipped(objective):
    """An objective far worse than naive is clipped to -1.0, not lower."""
    assert (NAIVE - objective) / (NAIVE - REFERENCE) < -1.0  # unclipped value is below the floor
    assert reward(objective, NAIVE, REFERENCE) == -1.0


def test_exactly_at_clip_boundary():
    """An objective one naive-reference gap worse than naive scores exactly -1.0."""
    assert reward(NAIVE + (NAIVE - REFERENCE), NAIVE, REFERENCE) == -1.0


@pytest.mark.parametrize(
    "objective",
    [None, math.nan, math.inf, -math.inf, True, False, "849", [849]],
    ids=["none", "nan", "inf", "-inf", "true", "false", "string", "list"],
)
def test_invalid_objective_fails(objective):
    """A missing, non-finite, boolean or non-numeric objective scores -1.0."""
    assert reward(objective, NAIVE, REFERENCE) == FAIL


@pytest.mark.parametrize(
    "naive, reference",
    [(math.nan, REFERENCE), (NAIVE, math.inf), (None, REFERENCE), (True, False)],
    ids=["nan-naive", "inf-reference", "none-naive", "bool-values"],
)
def test_invalid_naive_or_reference_fails(naive, reference):
    """A non-finite or non-numeric naive/reference value never yields a reward above -1.0."""
    assert reward(REFERENCE, naive, reference) == FAIL


@pytest.mark.parametrize(
    "objective, naive, reference, expected",
    [
        (100, 100, 100, 1.0),  # naive == reference, objective matches
        (99, 100, 100, 1.0),  # beats both
        (101, 100, 100, -1.0),  # worse than the reference
        (90, 80, 90, 1.0),  # naive below reference: matching the reference is enough
        (80, 80, 90, 1.0),
        (91, 80, 90, -1.0),
    ],
)
def test_no_room_between_naive_and_reference(objective, naive, reference, expected):
    """When naive <= reference, objective <= reference scores 1.0 and anything else -1.0."""
    assert reward(objective, naive, reference) == expected


def test_all_zero_objective():
    """naive == reference == objective == 0 (a zero objective) scores 1.0 without dividing by zero."""
    assert reward(0, 0, 0) == 1.0
    assert reward(0.0, 0.0, 0.0) == 1.0


def test_reward_is_float():
    """The reward is a plain float even for integer objectives (it goes into reward.json)."""
    value = reward(1000, NAIVE, REFERENCE)
    assert type(value) is float
    assert value == pytest.approx((NAIVE - 1000) / (NAIVE - REFERENCE))


def test_mean_reward_of_empty_list_fails():
    """Level 2 with no evaluation instances scores -1.0."""
    assert mean_reward([]) == FAIL


@pytest.mark.parametrize("rewards", [[1.0], [1.0, 0.0], [1.0, -1.0, 0.5], [1.25, 0.75, 0.0, -1.0]])
def test_mean_reward_is_the_mean(rewards):
    """Level 2 reward is the arithmetic mean of the per-instance rewards."""
    assert mean_reward(rewards) == pytest.approx(sum(rewards) / len(rewards))
