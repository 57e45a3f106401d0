"""The shipped build of orharbor-bench 1.0 (benchmarks/orharbor-bench-1/): this recipe's rows, sound references.

What the release folder promises is checked from its data: it is the
shipped recipe's build (the same check ``--resume`` makes, so a change to a
generator or a plan that would silently give other instances fails here),
every stored reference and naive answer scores what its row says under
today's verifier, each kept instance clears ``min_gap``, and the references
had their cores to themselves.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import problem_modules
from orharbor.benchmark.recipe import load_recipe
from orharbor.benchmark.release import RELEASE_FILE, build_release, read_release, shipped_releases
from orharbor.cli import main
from orharbor.datasets.engine import MAX_ATTEMPTS, STARVED_SHARE, relative_gap
from orharbor.datasets.rows import instance_of, row_instances

SHIPPED = Path(__file__).resolve().parents[1] / "benchmarks" / "orharbor-bench-1"


@pytest.fixture(scope="module")
def release():
    return read_release(SHIPPED)


def test_the_folder_is_the_shipped_recipe_built_whole(release, tmp_path):
    recipe, rows = release
    assert recipe.text == load_recipe("orharbor-bench-1").text
    assert {name: len(r) for name, r in rows.items()} == {part.name: part.plan.num_rows for part in recipe.parts}
    copy = tmp_path / "release"
    shutil.copytree(SHIPPED, copy)

    def no_solving():
        raise AssertionError("a finished release must resume without solving anything")

    said = []
    build_release(recipe, copy, no_solving, resume=True, say=said.append)
    assert said == [f"{copy} already holds every part of orharbor-bench@1.0: nothing to build"]
    assert (copy / RELEASE_FILE).read_bytes() == (SHIPPED / RELEASE_FILE).read_bytes()  # provenance untouched


def _solved(row: dict):
    """(instance, reference, reference solution, naive, naive solution) of each instance of a row."""
    for i in row_instances(row):
        yield instance_of(row, i), i.reference, i.reference_solution, i.baseline, i.baseline_solution


@pytest.mark.slow
def test_the_release_ships_in_the_package_and_exports_by_name_from_anywhere(tmp_path, monkeypatch):
    """benchmarks/orharbor-bench-1 is the package's own copy, so an installed orharbor exports it by name; a name
    that is neither a folder nor a shipped release is one line naming the shipped ones."""
    assert SHIPPED.resolve() == shipped_releases()["orharbor-bench@1.0"].resolve()
    assert shipped_releases()["orharbor-bench-1"] == shipped_releases()["orharbor-bench@1.0"]
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    by_name = runner.invoke(main, ["export", "--release", "orharbor-bench@1.0", "--smoke", "--out", "by-name"])
    assert by_name.exit_code == 0, by_name.output
    by_path = runner.invoke(main, ["export", "--release", str(SHIPPED), "--smoke", "--out", "by-path"])
    assert by_path.exit_code == 0, by_path.output
    names = sorted(p.name for p in (tmp_path / "by-name").glob("*/task.toml"))
    assert names and names == sorted(p.name for p in (tmp_path / "by-path").glob("*/task.toml"))
    unknown = runner.invoke(main, ["export", "--release", "orharbor-bench@9.9", "--out", "x"])
    assert unknown.exit_code == 1 and not (tmp_path / "x").exists()
    known = ", ".join(sorted(shipped_releases()))
    assert f"neither a release folder nor a shipped release ({known})" in unknown.output
    assert "orharbor-bench@1.0" in known


def test_every_stored_answer_scores_what_its_row_says_and_clears_min_gap(release):
    recipe, rows = release
    for part in recipe.parts:
        module = problem_modules.get(part.plan.problem)
        for row in rows[part.name]:
            for instance, ref, ref_solution, naive, naive_solution in _solved(row):
                assert module.evaluate(instance, ref_solution) == ref, row["id"]
                assert module.evaluate(instance, naive_solution) == naive, row["id"]
                assert ref <= naive, row["id"]
                gave_up = len(row.get("skipped_seeds", [])) >= MAX_ATTEMPTS - 1
                if not part.plan.published and not gave_up:
                    gap = relative_gap({"baseline": naive, "reference": ref})
                    assert part.plan.accepts(gap, ref == 0), (row["id"], gap)


def test_the_references_had_their_cores_to_themselves(release):
    provenance = json.loads((SHIPPED / RELEASE_FILE).read_text())
    assert provenance["tag"] == "orharbor-bench@1.0"
    assert provenance["reference_cpu_share"]["min"] >= STARVED_SHARE
