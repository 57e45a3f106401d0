"""The parts of orharbor-bench 1.1 built so far (benchmarks/orharbor-bench-1.1/*.jsonl), checked from their data.

The build runs in resumable parts over several sessions; every finished part is
shipped as it lands, so these checks cover each part file present: it is the
recipe's build of that part (what ``--resume`` checks), every stored answer
scores what its row says under today's verifier, each reference is no worse than
the ladder answers it started from, and each best known value is the best of what
the row holds, with its bound below it. Journals (parts still under way) are not read.
"""

from __future__ import annotations

import json

import pytest

from orharbor import problem_modules
from orharbor.benchmark.recipe import load_recipe
from orharbor.benchmark.release import RELEASE_FILE
from orharbor.datasets.engine import STARVED_SHARE, cpu_share, finished_rows
from orharbor.datasets.rows import instance_of, read_rows, row_instances

from test_shipped_release import SHIPPED

FOLDER = SHIPPED.with_name("orharbor-bench-1.1")
RECIPE = load_recipe("orharbor-bench-1.1")
BUILT = [part for part in RECIPE.parts if (FOLDER / part.file).exists()]


def test_the_folder_holds_this_recipe_and_its_finished_parts_only():
    assert (FOLDER / "recipe.toml").read_text() == RECIPE.text
    assert BUILT, "no part of 1.1 is built"
    assert {p.name for p in FOLDER.glob("*.jsonl")} == {part.file for part in BUILT}


def _instances(row: dict):
    """(instance, reference, its solution, naive, its solution, reference meta, best known, its solution) per instance."""
    for i in row_instances(row):
        yield (instance_of(row, i), i.reference, i.reference_solution, i.baseline, i.baseline_solution, i.reference_meta,
               i.best_known, i.best_known_solution)


@pytest.mark.parametrize("part", BUILT, ids=[part.name for part in BUILT])
def test_a_built_part_is_sound(part):
    assert finished_rows(part.plan, FOLDER / part.file) == part.plan.num_rows  # the recipe's rows, as --resume checks
    module = problem_modules.get(part.plan.problem)
    for row in read_rows(FOLDER / part.file):
        for instance, ref, ref_solution, naive, naive_solution, meta, best, best_solution in _instances(row):
            where = row["id"]
            assert module.evaluate(instance, ref_solution) == ref, where
            assert module.evaluate(instance, naive_solution) == naive, where
            # started from the ladder's best answer, the reference is never worse than any rung
            ladder = meta["ladder"]
            assert all(ref <= ladder[rung] for rung in ("rule", "search") if ladder.get(rung) is not None), where
            assert meta["hint"]["objective"] >= ref, where
            # the best known value: at most the reference, at least its bound, reached by a stored answer
            assert best is not None and best["value"] <= ref, where
            assert best["bound"] is None or best["bound"] <= best["value"], where
            if best_solution is not None:
                assert module.evaluate(instance, best_solution) == best["value"], where
            elif not part.plan.published:
                assert best["value"] == ref and best["source"] == "reference", where
            # a reference that ran to its limit had its core: a starved one is weaker than its limit says
            share = cpu_share(meta)
            assert share is None or share >= STARVED_SHARE * part.plan.solver_workers, (where, share)


def test_release_json_comes_with_the_last_part_and_records_every_reference():
    """release.json is written when the last part lands (an unfinished release has no provenance); it then
    records every instance's reference (start, limit, threads, status, bound) and best known value, and
    that the references had their cores."""
    release = FOLDER / RELEASE_FILE
    if len(BUILT) < len(RECIPE.parts):
        assert not release.exists()
        return
    provenance = json.loads(release.read_text())
    assert provenance["tag"] == "orharbor-bench@1.1"
    assert provenance["reference_cpu_share"]["min"] >= STARVED_SHARE
    expected = []
    for part in RECIPE.parts:
        for row in read_rows(FOLDER / part.file):
            if row["level"] == 1:
                expected.append((row["id"], row["reference"], row["best_known"]))
            else:
                expected += [(f"{row['id']}#{i}", ref, known)
                             for i, (ref, known) in enumerate(zip(row["eval_references"], row["eval_best_known"]))]
    records = provenance["references"]
    assert [(r["id"], r["reference"], r["best_known"]) for r in records] == expected
    assert provenance["instances"] == len(expected)
    for record in records:
        assert record["hint"] and record["time_limit_s"] in (60.0, 120.0) and record["workers"] == 1, record
        assert record["status"] in ("OPTIMAL", "FEASIBLE"), record
        assert record["bound"] is None or record["bound"] <= record["reference"], record


def test_every_tier_kept_separates_its_rungs_and_every_dropped_one_does_not():
    """Issue 32's rule, on the ladder the build recorded: a tier stays in the release only if its quality
    figure orders naive < rule < search with 95% intervals apart; the recipe drops the others with a reason."""
    from orharbor.benchmark.built_ladder import built_ladder

    if len(BUILT) < len(RECIPE.parts):
        pytest.skip("the verdicts are final once every part is built")  # the build runs over several sessions
    rows = {part.name: read_rows(FOLDER / part.file) for part in RECIPE.parts}
    tiers = built_ladder(RECIPE, rows)
    assert {name for tier in tiers for name in tier["parts"]} == {part.name for part in RECIPE.parts}
    for tier in tiers:
        where = (tier["problem"], tier["size"], tier["level"], tier["verdict"])
        assert (tier["verdict"] == "ok") == (tier["dropped"] is None), where
