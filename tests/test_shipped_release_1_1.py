"""orharbor-bench 1.1 as shipped (src/orharbor/benchmark/releases/orharbor-bench-1.1/), checked from its data.

Every part is the recipe's build of that part (what ``--resume`` checks), every stored
answer scores what its row says under today's verifier, each reference is no worse than the
ladder answers it started from and had its core, each best known value is the best of what the
row holds with its bound below it, release.json records every reference, and the recipe keeps
exactly the tiers whose ladder separates.
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


def test_the_folder_holds_this_recipe_and_every_part_of_it():
    assert (FOLDER / "recipe.toml").read_text() == RECIPE.text
    assert {p.name for p in FOLDER.iterdir()} == {part.file for part in RECIPE.parts} | {"recipe.toml", RELEASE_FILE}


def _instances(row: dict):
    """(instance, reference, its solution, naive, its solution, reference meta, best known, its solution) per instance."""
    for i in row_instances(row):
        yield (
            instance_of(row, i),
            i.reference,
            i.reference_solution,
            i.baseline,
            i.baseline_solution,
            i.reference_meta,
            i.best_known,
            i.best_known_solution,
        )


@pytest.mark.parametrize("part", RECIPE.parts, ids=[part.name for part in RECIPE.parts])
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


def test_release_json_records_every_reference_and_the_dropped_parts():
    """Every instance's reference (start, limit, threads, status, bound) and best known value, that the
    references had their cores, and the parts the recipe drops with its reasons."""
    provenance = json.loads((FOLDER / RELEASE_FILE).read_text())
    assert provenance["tag"] == "orharbor-bench@1.1"
    assert provenance["reference_cpu_share"]["min"] >= STARVED_SHARE
    expected = [
        (i.key, i.reference, i.best_known)
        for part in RECIPE.parts
        for row in read_rows(FOLDER / part.file)
        for i in row_instances(row)
    ]
    records = provenance["references"]
    assert [(r["id"], r["reference"], r["best_known"]) for r in records] == expected
    assert provenance["instances"] == len(expected)
    for record in records:
        assert record["hint"] and record["time_limit_s"] in (60.0, 120.0) and record["workers"] == 1, record
        assert record["status"] in ("OPTIMAL", "FEASIBLE"), record
        assert record["bound"] is None or record["bound"] <= record["reference"], record
    assert {(d["file"], d["reason"]) for d in provenance["dropped"]} == {
        (part.file, RECIPE.dropped[part.name]) for part in RECIPE.parts if part.name in RECIPE.dropped
    }


def test_the_release_is_shipped_by_name_and_its_export_leaves_the_dropped_tiers_out(tmp_path):
    from orharbor.api import plan_release_export
    from orharbor.benchmark.release import release_folder

    assert release_folder("orharbor-bench@1.1") == release_folder("orharbor-bench-1.1")
    assert release_folder("orharbor-bench@1.1").resolve() == FOLDER.resolve()
    plan = plan_release_export("orharbor-bench@1.1", tmp_path / "tasks")
    exported = {part.name for part, _ in plan.parts}
    assert exported == {part.name for part in RECIPE.released_parts} and exported.isdisjoint(RECIPE.dropped)
    assert not any(row["problem"] == "rostering" for _, rows in plan.parts for row in rows)


def test_every_tier_kept_separates_its_rungs_and_every_dropped_one_does_not():
    """Issue 32's rule, on the ladder the build recorded: a tier stays in the release only if its quality
    figure orders naive < rule < search with 95% intervals apart; the recipe drops the others with a reason."""
    from orharbor.benchmark.built_ladder import built_ladder

    rows = {part.name: read_rows(FOLDER / part.file) for part in RECIPE.parts}
    tiers = built_ladder(RECIPE, rows)
    assert {name for tier in tiers for name in tier["parts"]} == {part.name for part in RECIPE.parts}
    for tier in tiers:
        where = (tier["problem"], tier["size"], tier["level"], tier["verdict"])
        assert (tier["verdict"] == "ok") == (tier["dropped"] is None), where
