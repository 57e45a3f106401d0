"""Modelling metrics of answer files made outside Harbor: execution rate, accuracy, silent failure rate.

- execution rate: share of attempts whose code ran and wrote a well-formed
  answer (here: a well-formed answer file is there);
- accuracy: share of attempts whose answer is correct;
- silent failure rate: share of attempts that executed but whose answer is
  wrong (the code ran, nothing complained, the number is off).

Harbor trials are read by the rest of :mod:`orharbor.report`, which computes
the same three rates from the verifier's ``details.json``; this module grades a
folder of ``answer.json`` files (runs of the models made elsewhere, a file
standing for its run) against RetailOpt rows into the same records, so both go
through :func:`orharbor.report.tables.modelling_rows` (``orharbor metrics``).
"""

from __future__ import annotations

from pathlib import Path

from orharbor.modelling.retailopt import expected_answer
from orharbor.report import Reading, TrialRecord, build
from orharbor.verifiers.modelling import score_answer


def attempts_from_answers(folder: Path, rows: list[dict], agent: str = "answers") -> list[TrialRecord]:
    """Grade ``<scenario_id>.json`` (or ``<scenario_id>/answer.json``) in ``folder`` against each row."""
    attempts = []
    for row in rows:
        path = folder / f"{row['scenario_id']}.json"
        if not path.exists():
            path = folder / row["scenario_id"] / "answer.json"
        reward, details = score_answer(str(path), expected_answer(row))
        attempts.append(
            TrialRecord(
                job=folder.name,
                trial=row["scenario_id"],
                task=row["id"],
                agent=agent,
                model=None,
                kind="modelling",
                problem="retailopt",
                family=row.get("family"),
                reward=reward,
                executed=bool(details["executed"]),
                correct=bool(details["correct"]),
            )
        )
    return attempts


def answers_report(attempts: list[TrialRecord]) -> dict:
    """The report (modelling part) of graded answer files."""
    return build(Reading(trials=attempts))
