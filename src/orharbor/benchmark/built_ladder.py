"""The ladder a release's build recorded, read from its rows: no policy is run.

Every reference of a release starts from the best of the ladder's ``rule`` and
``search`` answers, so the build keeps both objectives in each instance's
``reference_meta["ladder"]``. Read back beside the naive answer, the reference
and the best known value, they give per tier (class x size x level, a tier's
growth parts pooled) the statistics :func:`orharbor.benchmark.ladder.aggregate`
gives from runs, and the separation verdict a tier needs to stay in the
release. A recipe drops a tier that fails it (``[[dropped]]``); the rows of a
dropped tier stay in the release as the evidence, pooled apart from the rest.
"""

from __future__ import annotations

from collections import defaultdict

from orharbor.benchmark.ladder import rung_stats, separation_verdict
from orharbor.datasets.rows import row_instances
from orharbor.report.tables import size_order
from orharbor.verifiers.quality import quality
from orharbor.verifiers.reward import reward

#: The rungs a build records, weakest first.
RUNGS = ("naive", "rule", "search", "reference")


def built_ladder(recipe, rows: dict[str, list[dict]]) -> list[dict]:
    """One row per tier (and per dropped tier apart): each rung's mean reward and quality with 95% intervals.

    ``recipe`` and ``rows`` are what :func:`orharbor.benchmark.release.read_release`
    returns. A row has the keys of :func:`~orharbor.benchmark.ladder.aggregate`'s
    (problem, size, level, policies, ceiling, headline, verdict) and ``parts``
    and ``dropped`` (the recipe's reason, or None).
    """
    groups: dict[tuple, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    parts: dict[tuple, list[str]] = defaultdict(list)
    for part in recipe.parts:
        reason = recipe.dropped.get(part.name)
        for row in rows[part.name]:
            key = (row["problem"], row["size"], int(row["level"]), reason)
            if part.name not in parts[key]:
                parts[key].append(part.name)
            for rung, scores in rung_scores(row).items():
                groups[key][rung].extend(scores)
    out = []
    for key in sorted(groups, key=lambda k: (k[0], size_order(k[0], k[1]), k[2], k[3] or "")):
        problem, size, level, reason = key
        policies = {}
        for rung in RUNGS:
            found = groups[key].get(rung)
            if not found:
                continue
            policies[rung] = rung_stats([r for r, _ in found], [q for _, q in found])
        judged = all(rung in policies for rung in ("rule", "search"))
        out.append(
            {
                "problem": problem,
                "size": size,
                "level": level,
                "policies": policies,
                "ceiling": None,
                "headline": True,
                "parts": parts[key],
                "verdict": separation_verdict(policies) if judged else "no ladder answers recorded",
                "dropped": reason,
            }
        )
    return out


def rung_scores(row: dict) -> dict[str, list[tuple[float, float]]]:
    """(reward, quality) of each rung the build recorded, per instance of a row; a rung the build did not record
    (no ladder answer) is left out for that instance."""
    scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for instance in row_instances(row):
        naive, reference = instance.baseline, instance.reference
        assert naive is not None and reference is not None  # a built row records both for every instance
        known = (instance.best_known or {}).get("value", reference)
        ladder = instance.reference_meta.get("ladder", {})
        # a recorded None is a rung that found no feasible answer, scored as one
        answers = {
            "naive": naive,
            **{rung: ladder[rung] for rung in ("rule", "search") if rung in ladder},
            "reference": reference,
        }
        for rung, objective in answers.items():
            scores[rung].append((reward(objective, naive, reference), quality(objective, known)))
    return scores
