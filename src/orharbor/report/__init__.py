"""orharbor report: what the agents did, per problem, size, level and agent.

:func:`build` turns Harbor job folders into one report dict with stable keys
(``algorithm`` rows, ``modelling`` rows by difficulty and by family, what was
skipped); :func:`build_comparison` sets two runs side by side.
:mod:`orharbor.report.render` prints either as a terminal table, CSV, JSON or
markdown, and :mod:`orharbor.report.html` as one self-contained page.
:mod:`orharbor.report.metrics` grades RetailOpt answer files made outside
Harbor into the same records.
"""

from __future__ import annotations

from orharbor.report.jobs import Reading, Skipped, TrialRecord, read_jobs
from orharbor.report.tables import algorithm_rows, compare_rows, modelling_rows

__all__ = ["Reading", "Skipped", "TrialRecord", "build", "build_comparison", "read_jobs"]


def build(reading: Reading) -> dict:
    """The report of every trial read."""
    return {
        "jobs": sorted({t.job for t in reading.trials}),
        "trials": len(reading.trials),
        "skipped_trials": reading.skipped_trials,
        "skipped": _skipped(reading.skipped),
        "algorithm": algorithm_rows(reading.trials),
        "modelling": {
            "by_difficulty": modelling_rows(reading.trials, "difficulty"),
            "by_family": modelling_rows(reading.trials, "family"),
        },
    }


def build_comparison(a: Reading, b: Reading, a_name: str, b_name: str) -> dict:
    """Job B against job A, per group, with a paired test on the tasks both ran."""
    return {
        "a": a_name,
        "b": b_name,
        "a_agents": sorted({t.agent_label for t in a.trials}),
        "b_agents": sorted({t.agent_label for t in b.trials}),
        "trials": len(a.trials) + len(b.trials),
        "skipped_trials": a.skipped_trials + b.skipped_trials,
        "skipped": _skipped(a.skipped + b.skipped),
        "compare": compare_rows(a.trials, b.trials),
    }


def _skipped(skipped: list[Skipped]) -> list[dict]:
    return [{"path": str(s.path), "reason": s.reason, "trials": s.trials} for s in skipped]
