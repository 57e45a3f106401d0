"""The ladder's headline: the quality figure per rung, its intervals, and 1.1's separation test."""

from __future__ import annotations

import pytest

from orharbor.benchmark.ladder import Result, aggregate, applicable, separation_verdict, table


def stat(mean: float, lo: float, hi: float) -> dict:
    return {"mean": 0.0, "ci": (0.0, 0.0), "n": 5, "quality": {"mean": mean, "ci": (lo, hi)}}


@pytest.mark.parametrize(
    "stats, expected",
    [
        (
            {
                "naive": stat(0.2, 0.1, 0.3),
                "rule": stat(0.7, 0.6, 0.8),
                "search": stat(0.9, 0.85, 0.95),
                "reference": stat(0.95, 0.9, 0.99),
            },
            "ok",
        ),
        # touching intervals do not separate: the upper end must lie below the lower end
        (
            {"naive": stat(0.2, 0.1, 0.6), "rule": stat(0.7, 0.6, 0.8), "search": stat(0.9, 0.85, 0.95)},
            "naive and rule overlap",
        ),
        ({"naive": stat(0.2, 0.1, 0.3), "rule": stat(0.9, 0.8, 0.95), "search": stat(0.85, 0.7, 0.9)}, "search < rule"),
        (
            {
                "naive": stat(0.2, 0.1, 0.3),
                "rule": stat(0.7, 0.6, 0.8),
                "search": stat(0.9, 0.85, 0.95),
                "reference": stat(0.88, 0.8, 0.95),
            },
            "reference < search",
        ),
        # the reference may fall a hair below a fresh run of the search it started from
        (
            {
                "naive": stat(0.2, 0.1, 0.3),
                "rule": stat(0.7, 0.6, 0.8),
                "search": stat(0.9, 0.85, 0.95),
                "reference": stat(0.897, 0.8, 0.95),
            },
            "ok",
        ),
    ],
)
def test_the_separation_verdict(stats, expected):
    assert separation_verdict(stats) == expected


def result(policy: str, qualities: tuple[float, ...], task: str = "t") -> Result:
    return Result(
        task=task,
        problem="cvrp",
        size="n100",
        level=2,
        policy=policy,
        reward=0.0,
        instance_rewards=tuple(0.0 for _ in qualities),
        instance_qualities=qualities,
    )


def test_aggregate_makes_quality_the_headline_only_when_every_rung_has_it():
    rows = aggregate(
        [
            result("naive", (0.1, 0.12, 0.11, 0.13, 0.1)),
            result("rule", (0.7, 0.72, 0.71, 0.69, 0.7)),
            result("search", (0.9, 0.91, 0.92, 0.9, 0.93)),
        ],
        ["naive", "rule", "search"],
    )
    assert rows[0]["headline"] and rows[0]["verdict"] == "ok"
    assert rows[0]["policies"]["rule"]["quality"]["mean"] == pytest.approx(0.704)
    assert table(rows, ["naive", "rule", "search"])[1][4].startswith("0.704 [")
    no_best_known = Result(
        task="t", problem="cvrp", size="n100", level=2, policy="rule", reward=0.5, instance_rewards=(0.5,)
    )
    rows = aggregate([result("naive", (0.1,)), no_best_known], ["naive", "rule"])
    assert not rows[0]["headline"]  # the rule's task knew no best known value: the reward verdict applies


def test_level1_only_rungs_and_the_strong_rung_only_where_a_class_has_one():
    assert applicable("cvrp", 1, "strong") and applicable("vrptw", 1, "strong")
    assert not applicable("cvrp", 2, "strong") and not applicable("jobshop", 1, "strong")
    assert applicable("jobshop", 1, "ortools") and not applicable("jobshop", 2, "ortools")
    assert applicable("jobshop", 2, "reference") and applicable("jobshop", 2, "search")
