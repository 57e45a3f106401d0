"""orharbor-bench: the recipe, Taillard's published set, and a release built, resumed and exported by name.

The shipped recipe is checked as data (every class at two or more standard
sizes, references of at least 60 s); the build and export paths run on a
small recipe of the same shape with sub-second limits.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.benchmark.recipe import RecipeError, load_recipe, parse_recipe, shipped_recipes
from orharbor.benchmark.release import build_release
from orharbor.datasets.published import UnknownPublishedSet, expand_names, published_set
from orharbor.datasets.rows import read_rows
from orharbor.problem_modules.jobshop.published import taillard_set

from harbor_sync import harbor_sync
from waiting import wait_until

ORHARBOR = Path(sys.executable).with_name("orharbor")

TINY = """
name = "tiny-bench"
version = "0.1"
description = "a release of the same shape as orharbor-bench, at sub-second limits"
[build]
reference_time_limit_s = 0.2
solver_workers = 1
start_seed = 1000
min_gap = 0.0
eval_instances = 2
[export]
verifier_mode = "shared"
cpus = 1
memory_mb = 2048
[[published]]
problem = "jobshop"
set = "taillard"
names = ["ta01-ta02", "ta71"]
agent_timeout_s = 600
[[tiers]]
problem = "rcpsp"
size = "j30"
level1_rows = 2
level2_rows = 1
solve_time_limit_s = 5
agent_timeout_s = 900
[[tiers]]
problem = "wtardiness"
size = "n40"
level1_rows = 1
level2_rows = 0
solve_time_limit_s = 5
agent_timeout_s = 700
"""


#: A tier grown by a part of its own: more instances of rcpsp j30 at both levels, from seeds of their own.
GROWN = """[[tiers]]
problem = "rcpsp"
size = "j30"
part = "more"
start_seed = 1100
level1_rows = 2
level2_rows = 1
solve_time_limit_s = 5
agent_timeout_s = 900
"""


def test_a_tier_grows_by_a_part_of_its_own_with_seeds_of_its_own():
    """More instances for a tier come as a new part beside the built one (whose rows, seeds and journal
    stay as they are), named by its ``part``, with a ``start_seed`` no seed of the first part can reach."""
    from orharbor.datasets.engine import planned_rows

    recipe = parse_recipe(TINY + GROWN, "tiny.toml")
    parts = {part.name: part.plan for part in recipe.parts}
    assert [name for name in parts if name.startswith("rcpsp")] == [
        "rcpsp-j30-l1",
        "rcpsp-j30-l2",
        "rcpsp-j30-more-l1",
        "rcpsp-j30-more-l2",
    ]
    assert parts["rcpsp-j30-l1"] == parse_recipe(TINY, "tiny.toml").parts[0].plan  # the built part is unchanged
    assert [r["id"] for r in planned_rows(parts["rcpsp-j30-more-l1"])] == ["rcpsp-j30-l1-s1100", "rcpsp-j30-l1-s1101"]
    first = {s for r in planned_rows(parts["rcpsp-j30-l2"]) for s in r["eval_seeds"]}
    grown = {s for r in planned_rows(parts["rcpsp-j30-more-l2"]) for s in r["eval_seeds"]}
    assert len(grown) == 2 and not first & grown


#: A tier the recipe drops: built like the others, never exported.
DROPPED = """[[dropped]]
problem = "rcpsp"
size = "j30"
reason = "its rule and search overlap"
"""


def test_a_dropped_tier_takes_its_growth_parts_and_both_levels_unless_one_is_named():
    recipe = parse_recipe(TINY + GROWN + DROPPED, "tiny.toml")
    assert recipe.dropped == {
        name: "its rule and search overlap"
        for name in ("rcpsp-j30-l1", "rcpsp-j30-l2", "rcpsp-j30-more-l1", "rcpsp-j30-more-l2")
    }
    assert [part.name for part in recipe.released_parts] == ["wtardiness-n40-l1", "jobshop-taillard"]
    one_level = parse_recipe(TINY + GROWN + DROPPED.replace("reason", "level = 2\nreason"), "tiny.toml")
    assert sorted(one_level.dropped) == ["rcpsp-j30-l2", "rcpsp-j30-more-l2"]
    # only the recipe's text differs from the undropped one: the parts, and so the build, are the same
    assert recipe.parts == parse_recipe(TINY + GROWN, "tiny.toml").parts


def run(*args, timeout=300):
    return subprocess.run([str(ORHARBOR), *map(str, args)], capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------ the shipped recipe


def test_the_shipped_recipe_covers_every_class_at_two_or_more_standard_sizes():
    assert "orharbor-bench-1" in shipped_recipes()
    recipe = load_recipe("orharbor-bench-1")
    assert recipe.tag == "orharbor-bench@1.0"
    sizes: dict[str, set[str]] = {}
    for part in recipe.parts:
        assert part.plan.reference_time_limit_s >= 60 and part.agent_timeout_s >= 1800
        if not part.plan.published:
            sizes.setdefault(part.plan.problem, set()).update(part.plan.sizes)
            assert part.plan.min_gap > 0 and part.plan.start_seed >= 1000  # apart from the shipped smoke rows
    assert set(sizes) == set(problem_modules.PROBLEMS)
    assert all(len(found) >= 2 for found in sizes.values()), sizes
    taillard = [part for part in recipe.parts if part.plan.published == "taillard"]
    assert len(taillard) == 1 and taillard[0].plan.names == tuple(f"ta{i:02d}" for i in range(1, 81))


def test_a_recipe_is_checked_against_the_schema_and_the_problem_classes():
    cases = {
        "not = [toml": "not TOML",
        TINY.replace('version = "0.1"', ""): "version",
        TINY.replace('problem = "rcpsp"', 'problem = "rcpspp"'): "tiers[0].problem: unknown problem",
        TINY.replace('size = "j30"', 'size = "j31"'): "tiers[0].size: 'j31' is not a size of rcpsp",
        TINY.replace("level1_rows = 1\nlevel2_rows = 0", "level1_rows = 0\nlevel2_rows = 0"): "both 0",
        TINY.replace('set = "taillard"', 'set = "dmu"'): "has no published set 'dmu'",
        TINY.replace('"ta71"', '"ta81"'): "has no instance 'ta81'",
        TINY.replace("reference_time_limit_s = 0.2", "reference_time_limit_s = -1"): "reference_time_limit_s",
        TINY.replace("[export]", "[export]\ncolour = 1"): "colour",
        TINY + '[[tiers]]\nproblem = "rcpsp"\nsize = "j30"\nlevel1_rows = 1\nlevel2_rows = 0\n'
        "solve_time_limit_s = 5\nagent_timeout_s = 9\n": "rcpsp-j30-l1 is declared twice",
        TINY + DROPPED.replace('"j30"', '"j60"'): "dropped[0]: no tier rcpsp j60 to drop",
        TINY + DROPPED.replace("reason", "level = 3\nreason"): "level",
        TINY + DROPPED.replace('reason = "its rule and search overlap"', 'reason = ""'): "reason",
        TINY + DROPPED.replace('reason = "its rule and search overlap"\n', ""): "reason",
        re.sub(r"\[\[published\]\].*?(?=\[\[tiers\]\])", "", TINY, flags=re.S)
        + DROPPED
        + DROPPED.replace("rcpsp", "wtardiness").replace("j30", "n40"): "every part is dropped",
        TINY
        + GROWN.replace(
            "start_seed = 1100", "start_seed = 1030"
        ): "rcpsp-j30-more-l1 and rcpsp-j30-l1 can draw the same instance seeds (e.g. 1030); give "
        "rcpsp-j30-more-l1 a start_seed beyond 1039",
    }
    for text, message in cases.items():
        with pytest.raises(RecipeError, match=re.escape(message)):
            parse_recipe(text, "tiny.toml")
    with pytest.raises(RecipeError, match="no recipe 'orharbor-bench-9'"):
        load_recipe("orharbor-bench-9")


# ------------------------------------------------------------------ Taillard's published set


def test_taillards_eighty_instances_come_from_his_seeds_with_their_published_bounds():
    instances = taillard_set()
    assert [e["name"] for e in instances] == [f"ta{i:02d}" for i in range(1, 81)]
    sizes = [e["size"] for e in instances]
    assert [sizes[i] for i in range(0, 80, 10)] == [
        "15x15",
        "20x15",
        "20x20",
        "30x15",
        "30x20",
        "50x15",
        "50x20",
        "100x20",
    ]
    for entry in instances:
        known, instance = entry["best_known"], entry["instance"]
        assert set(known) == {"value", "source", "bound"} and 0 < known["bound"] <= known["value"]
        assert "ScheduleOpt" in known["source"] and entry["source"].startswith(f"Taillard (1993) {entry['name']}: ")
        # the agent's copy names neither the instance nor its seeds (its optimum is published)
        assert set(instance) == {"problem", "name", "n_jobs", "n_machines", "machines", "durations"}
        assert entry["name"] not in json.dumps(instance) and "seed" not in json.dumps(instance)
        # the trivial lower bound (longest job, busiest machine) must be below every published value
        trivial = max(
            max(map(sum, instance["durations"])),
            max(
                sum(
                    d
                    for row_m, row_d in zip(instance["machines"], instance["durations"])
                    for m, d in zip(row_m, row_d)
                    if m == machine
                )
                for machine in range(instance["n_machines"])
            ),
        )
        assert trivial <= known["bound"]
    assert instances[0]["best_known"]["value"] == 1231  # ta01's optimum, as ../shared/data SOURCES.md says
    assert expand_names("jobshop", "taillard", ["ta09-ta11", "ta80"]) == ["ta09", "ta10", "ta11", "ta80"]
    with pytest.raises(UnknownPublishedSet):
        expand_names("jobshop", "taillard", ["ta00"])
    assert published_set("jobshop", "taillard")["ta71"]["instance"]["n_jobs"] == 100


def test_ta01_is_the_published_file_exactly(instances_dir):
    ta01 = published_set("jobshop", "taillard")["ta01"]["instance"]
    jobshop = problem_modules.get("jobshop")
    for name in ("ta01", "TA01.txt"):
        published = jobshop.read(instances_dir / "jobshop" / name)
        assert (published["machines"], published["durations"]) == (ta01["machines"], ta01["durations"]), name


# ------------------------------------------------------------------ a release, built and exported


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The tiny recipe built once: (recipe file, release folder, the build's stderr)."""
    folder = tmp_path_factory.mktemp("release")
    recipe = folder / "tiny.toml"
    recipe.write_text(TINY)
    done = run("build-dataset", "--recipe", recipe, "--out", folder / "rel", "--workers", "2")
    assert done.returncode == 0, done.stderr
    return recipe, folder / "rel", done.stderr


def test_a_recipe_builds_every_part_with_its_provenance(built):
    recipe, release, stderr = built
    assert "tiny-bench@0.1: 4 of 4 parts to build (7 rows, 8 instances at 0.2 s)" in stderr
    assert (release / "recipe.toml").read_text() == TINY
    files = sorted(p.name for p in release.iterdir())
    assert files == [
        "jobshop-taillard.jsonl",
        "rcpsp-j30-l1.jsonl",
        "rcpsp-j30-l2.jsonl",
        "recipe.toml",
        "release.json",
        "wtardiness-n40-l1.jsonl",
    ]
    taillard = read_rows(release / "jobshop-taillard.jsonl")
    assert [r["id"] for r in taillard] == ["jobshop-ta01-l1", "jobshop-ta02-l1", "jobshop-ta71-l1"]
    for row in taillard:
        assert row["instance"] == published_set("jobshop", "taillard")[row["id"].split("-")[1]]["instance"]
        assert row["best_known"]["value"] <= row["reference"] <= row["baseline"]
        assert "instance_seed" not in row and "source_name" not in row
    level2 = read_rows(release / "rcpsp-j30-l2.jsonl")
    assert len(level2) == 1 and len(level2[0]["eval_seeds"]) == 2 and level2[0]["solve_time_limit_s"] == 5
    provenance = json.loads((release / "release.json").read_text())
    assert provenance["tag"] == "tiny-bench@0.1" and provenance["instances"] == 8
    assert provenance["built_with"]["ortools"] and provenance["built_with"]["cores"] == os.cpu_count()
    assert provenance["solve_cpu_time_s"] > 0


def unreleased_copy(release: Path, tmp_path: Path) -> Path:
    """A copy of a built release before its release.json: what a build looks like until its version is out."""
    copy = tmp_path / "rel"
    shutil.copytree(release, copy)
    (copy / "release.json").unlink()
    return copy


def no_solving():
    raise AssertionError("nothing is left to solve")


def test_a_built_release_is_never_overwritten_and_resume_is_a_no_op(built):
    recipe, release, _ = built
    before = {p.name: p.read_bytes() for p in release.iterdir()}
    again = run("build-dataset", "--recipe", recipe, "--out", release)
    assert again.returncode == 1 and "already exist" in again.stderr and "--force" in again.stderr
    resumed = run("build-dataset", "--recipe", recipe, "--out", release, "--resume")
    assert resumed.returncode == 0 and "nothing to build" in resumed.stderr, resumed.stderr
    # a true no-op: release.json keeps the provenance (machine, finish time) of the build that made it
    assert {p.name: p.read_bytes() for p in release.iterdir()} == before
    other = recipe.with_name("other.toml")
    other.write_text(TINY.replace("start_seed = 1000", "start_seed = 7"))
    refused = run("build-dataset", "--recipe", other, "--out", release, "--resume")
    assert refused.returncode == 1 and "built from another recipe" in refused.stderr


@pytest.mark.slow
def test_an_unreleased_build_resumes_into_a_grown_recipe_and_a_released_one_does_not(built, tmp_path):
    """A tier that needs more instances grows by a part of its own (GROWN): --resume builds the new parts
    beside the finished ones, which stay byte for byte, while no release.json says the version is out.
    A released folder, or a recipe that changes a built part, is still refused."""
    recipe, release, _ = built
    grown = tmp_path / "grown.toml"
    grown.write_text(TINY + GROWN)
    refused = run("build-dataset", "--recipe", grown, "--out", release, "--resume")
    assert refused.returncode == 1 and "built from another recipe" in refused.stderr
    unreleased = unreleased_copy(release, tmp_path)
    before = {p.name: p.read_bytes() for p in unreleased.iterdir()}
    changed = tmp_path / "changed.toml"
    changed.write_text(TINY.replace("level1_rows = 2", "level1_rows = 3") + GROWN)
    refused = run("build-dataset", "--recipe", changed, "--out", unreleased, "--resume")
    assert refused.returncode == 1 and "built from another recipe" in refused.stderr
    done = run("build-dataset", "--recipe", grown, "--out", unreleased, "--resume", "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert (
        "the recipe grew by 2 parts (rcpsp-j30-more-l1, rcpsp-j30-more-l2)" in done.stderr
        and "2 of 6 parts to build (3 rows, 4 instances" in done.stderr
    ), done.stderr
    after = {p.name: p.read_bytes() for p in unreleased.iterdir()}
    assert {name: after[name] for name in before if name != "recipe.toml"} == {
        name: data for name, data in before.items() if name != "recipe.toml"
    }
    assert after["recipe.toml"].decode() == TINY + GROWN
    assert [r["id"] for r in read_rows(unreleased / "rcpsp-j30-more-l1.jsonl")] == [
        "rcpsp-j30-l1-s1100",
        "rcpsp-j30-l1-s1101",
    ]
    assert json.loads(after["release.json"])["instances"] == 12


def test_a_recipe_changed_only_in_its_text_resumes_an_unreleased_build_without_solving(built, tmp_path):
    recipe, release, _ = built
    unreleased = unreleased_copy(release, tmp_path)
    said = []
    build_release(parse_recipe(TINY + "# a comment\n"), unreleased, no_solving, resume=True, say=said.append)
    assert said[0] == f"tiny-bench@0.1: the recipe's text changed since {unreleased} was started, not its parts"
    assert (unreleased / "recipe.toml").read_text() == TINY + "# a comment\n" and (unreleased / "release.json").exists()


@pytest.mark.slow
def test_a_dropped_tier_is_built_and_recorded_but_never_exported(built, tmp_path):
    """Dropping a tier is a change of the recipe's text only: an unreleased build takes it without solving,
    release.json lists the dropped parts with the reason, and neither the export nor its smoke subset has them."""
    recipe, release, _ = built
    dropped = unreleased_copy(release, tmp_path)
    build_release(parse_recipe(TINY + DROPPED), dropped, no_solving, resume=True)
    provenance = json.loads((dropped / "release.json").read_text())
    assert provenance["dropped"] == [
        {"file": f"rcpsp-j30-l{level}.jsonl", "reason": "its rule and search overlap"} for level in (1, 2)
    ]
    assert provenance["instances"] == 8  # the dropped rows are still the release's: its evidence
    done = run("export", "--release", dropped, "--out", tmp_path / "tasks")
    assert done.returncode == 0, done.stderr
    tasks = sorted(p.name for p in (tmp_path / "tasks").iterdir() if (p / "task.toml").exists())
    assert tasks == ["jobshop-ta01-l1", "jobshop-ta02-l1", "jobshop-ta71-l1", "wtardiness-n40-l1-s1000"]
    assert (
        "left out, as the recipe drops them: rcpsp-j30-l1, rcpsp-j30-l2: its rule and search overlap" in done.stdout
    ), done.stdout
    smoke = run("export", "--release", dropped, "--smoke", "--out", tmp_path / "smoke")
    assert smoke.returncode == 0, smoke.stderr
    assert sorted(p.name for p in (tmp_path / "smoke").iterdir() if (p / "task.toml").exists()) == [
        "jobshop-ta01-l1",
        "wtardiness-n40-l1-s1000",
    ]


def test_the_built_ladder_scores_each_recorded_rung_by_reward_and_quality():
    """Hand-computed: naive 100, reference 80, best known 75; the rule's 90 and a search that found nothing."""
    from orharbor.benchmark.built_ladder import rung_scores

    row = {
        "id": "x",
        "level": 1,
        "baseline": 100,
        "reference": 80,
        "best_known": {"value": 75, "source": "x", "bound": 70},
        "reference_meta": {"ladder": {"budget_s": 10.0, "rule": 90, "search": None}},
    }
    assert rung_scores(row) == {
        "naive": [(0.0, 0.75)],
        "rule": [(0.5, 75 / 90)],
        "search": [(-1.0, 0.0)],
        "reference": [(1.0, 75 / 80)],
    }
    row["reference_meta"] = {}  # a build without ladder answers records naive and reference only
    assert set(rung_scores(row)) == {"naive", "reference"}


def test_the_built_ladder_pools_a_tiers_parts_and_keeps_dropped_ones_apart(built):
    from orharbor.benchmark.built_ladder import built_ladder
    from orharbor.benchmark.release import read_release

    _, release, _ = built
    _, rows = read_release(release)
    recipe = parse_recipe(TINY + DROPPED)
    tiers = {(t["problem"], t["size"], t["level"]): t for t in built_ladder(recipe, rows)}
    assert set(tiers) == {
        ("jobshop", "15x15", 1),
        ("jobshop", "100x20", 1),
        ("rcpsp", "j30", 1),
        ("rcpsp", "j30", 2),
        ("wtardiness", "n40", 1),
    }
    j30 = tiers[("rcpsp", "j30", 2)]
    assert j30["dropped"] == "its rule and search overlap" and j30["parts"] == ["rcpsp-j30-l2"]
    assert j30["policies"]["naive"]["n"] == 2  # one row of two hidden instances
    assert (
        tiers[("jobshop", "15x15", 1)]["parts"] == ["jobshop-taillard"]
        and tiers[("jobshop", "15x15", 1)]["dropped"] is None
    )
    for tier in tiers.values():
        assert tier["policies"]["reference"]["mean"] == 1.0  # the reference scores 1 against itself
        # the tiny recipe sets no ladder_budget_s: its build ran no ladder, so no tier can be judged
        assert set(tier["policies"]) == {"naive", "reference"} and tier["verdict"] == "no ladder answers recorded"


def test_recipe_and_plan_options_do_not_mix(tmp_path):
    mixed = run("build-dataset", "--recipe", "orharbor-bench-1", "--sizes", "j30", "--out", tmp_path / "x")
    assert mixed.returncode == 2 and "drop --sizes" in mixed.stderr
    neither = run("build-dataset", "--out", tmp_path / "x.jsonl")
    assert neither.returncode == 2 and "Missing option '--problem'" in neither.stderr
    unknown = run("build-dataset", "--recipe", "no-such-recipe", "--out", tmp_path / "x")
    assert unknown.returncode == 1 and "no recipe 'no-such-recipe'" in unknown.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_the_release_exports_with_the_recipes_budgets_and_registers_by_name(built, tmp_path):
    _, release, _ = built
    done = run("export", "--release", release, "--out", tmp_path / "tasks")
    assert done.returncode == 0, done.stderr
    assert "harbor run -d tiny-bench@0.1 --registry-path" in done.stdout
    tasks = sorted(p.name for p in (tmp_path / "tasks").iterdir() if (p / "task.toml").exists())
    assert len(tasks) == 7
    budgets = {}
    for name in tasks:
        config = tomllib.loads((tmp_path / "tasks" / name / "task.toml").read_text())
        budgets[name] = config["agent"]["timeout_sec"]
        assert config["metadata"]["verifier_mode"] == "shared" and config["environment"]["cpus"] == 1
        assert ("best_known" in config["metadata"]) == name.startswith("jobshop-ta")
    assert budgets["jobshop-ta71-l1"] == 600 and budgets["rcpsp-j30-l2-s1000"] == 900
    # Harbor's `harbor sync` finds every digest of the release's dataset.toml current
    written = (tmp_path / "tasks" / "dataset.toml").read_bytes()
    assert "Updated 0 digest(s) in dataset.toml." in harbor_sync(tmp_path / "tasks")
    assert (tmp_path / "tasks" / "dataset.toml").read_bytes() == written
    assert budgets["wtardiness-n40-l1-s1000"] == 700
    registry = json.loads((tmp_path / "tasks" / "registry.json").read_text())
    assert [(d["name"], d["version"], len(d["tasks"])) for d in registry] == [("tiny-bench", "0.1", 7)]
    manifest = tomllib.loads((tmp_path / "tasks" / "dataset.toml").read_text())
    assert manifest["dataset"]["name"] == "orharbor/tiny-bench" and len(manifest["tasks"]) == 7
    assert all(t["digest"].startswith("sha256:") for t in manifest["tasks"])
    # the best known value is for the report, never for the agent
    ta01 = tmp_path / "tasks" / "jobshop-ta01-l1"
    seen = [
        ta01 / "instruction.md",  # and what the image holds (the Dockerfile itself is not in it)
        *(p for p in (ta01 / "environment").rglob("*") if p.is_file() and p.name != "Dockerfile"),
    ]
    for text in (p.read_text() for p in seen):
        assert "1231" not in text and "ta01" not in text and "840612802" not in text


@pytest.mark.slow
def test_the_smoke_subset_is_a_few_tasks_per_class_and_flags_override_the_recipe(built, tmp_path):
    _, release, _ = built
    done = run("export", "--release", release, "--smoke", "--verifier-mode", "separate", "--out", tmp_path / "s")
    assert done.returncode == 0, done.stderr
    tasks = sorted(p.name for p in (tmp_path / "s").iterdir() if (p / "task.toml").exists())
    assert tasks == ["jobshop-ta01-l1", "rcpsp-j30-l1-s1000", "rcpsp-j30-l2-s1000", "wtardiness-n40-l1-s1000"]
    config = tomllib.loads((tmp_path / "s" / "jobshop-ta01-l1" / "task.toml").read_text())
    assert config["metadata"]["verifier_mode"] == "separate"
    registry = json.loads((tmp_path / "s" / "registry.json").read_text())
    assert [(d["name"], d["version"]) for d in registry] == [("tiny-bench", "0.1-smoke")]
    misuse = run("export", "--smoke", "--out", tmp_path / "t")
    assert misuse.returncode == 2 and "--smoke picks the smoke subset of a --release" in misuse.stderr


def test_an_unbuilt_release_is_refused_with_how_to_go_on(built, tmp_path):
    recipe, _, _ = built
    half = tmp_path / "half"
    half.mkdir()
    (half / "recipe.toml").write_text(recipe.read_text())
    (half / "rcpsp-j30-l1.jsonl.journal").write_text("{}\n")
    done = run("export", "--release", half, "--out", tmp_path / "tasks")
    assert done.returncode == 1 and "is not fully built: 4 parts missing" in done.stderr
    assert "--resume the build" in done.stderr and not (tmp_path / "tasks").exists()
    plain = run("export", "--release", tmp_path, "--out", tmp_path / "tasks")
    assert plain.returncode == 1 and "not a release folder (no recipe.toml)" in plain.stderr


@pytest.mark.slow
def test_an_interrupted_release_build_keeps_finished_parts_and_resumes_to_the_same_rows(built, tmp_path):
    recipe, reference, _ = built
    out = tmp_path / "rel"
    process = subprocess.Popen(
        [str(ORHARBOR), "build-dataset", "--recipe", str(recipe), "--out", str(out), "--workers", "1"],
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(lambda: any(out.glob("*.jsonl")), timeout=240, what="a finished part")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    finished = {p.name: p.read_bytes() for p in out.glob("*.jsonl")}
    if len(finished) < 4:  # stopped before the end: the journals of the rest say how to go on
        assert "--resume" in stderr and "Traceback" not in stderr
    resumed = run("build-dataset", "--recipe", recipe, "--out", out, "--resume", "--workers", "2")
    assert resumed.returncode == 0, resumed.stderr
    for name, content in finished.items():
        assert (out / name).read_bytes() == content  # a finished part is kept as it was
    for part in ("jobshop-taillard", "rcpsp-j30-l1", "rcpsp-j30-l2", "wtardiness-n40-l1"):
        ids = [r["id"] for r in read_rows(out / f"{part}.jsonl")]
        assert ids == [r["id"] for r in read_rows(reference / f"{part}.jsonl")]
    assert not list(out.glob("*.journal"))


@pytest.mark.slow
def test_a_tier_can_pass_over_instances_whose_reference_is_zero(tmp_path):
    """Weighted tardiness with an optimum of 0 is solved by EDD alone: skip_zero_reference takes the next seed."""
    from orharbor.datasets.engine import BuildPlan, run_build
    from orharbor.datasets.pools import LocalPool

    wt = problem_modules.get("wtardiness")
    plan = BuildPlan("wtardiness", ("n8",), 1, 6, 5.0, skip_zero_reference=True)
    assert plan.key() != BuildPlan("wtardiness", ("n8",), 1, 6, 5.0).key()
    assert "skip_zero_reference" not in BuildPlan("wtardiness", ("n8",), 1, 6, 5.0).key()  # old journals resume
    run_build(plan, tmp_path / "rows.jsonl", LocalPool(2))
    rows = read_rows(tmp_path / "rows.jsonl")
    skipped = [seed for row in rows for seed in row.get("skipped_seeds", [])]
    assert skipped, "six n8 instances without a single one that has every job on time"
    for seed in skipped:  # each was passed over because its optimum is 0: earliest due date first proves it
        instance = wt.generate(seed, "n8")
        order = sorted(range(instance["n_jobs"]), key=lambda j: instance["due_dates"][j])
        end, late = 0, 0
        for job in order:
            end += instance["processing_times"][job]
            late += max(0, end - instance["due_dates"][job])
        assert late == 0
    assert all(row["reference"] > 0 for row in rows if row["reference_meta"]["status"] == "OPTIMAL")


# ------------------------------------------------------------------ the calibration ladder


@pytest.fixture(scope="module")
def tiny_tasks(built, tmp_path_factory):
    """The tiny release exported (separate verifier, as the benchmark ships)."""
    _, release, _ = built
    out = tmp_path_factory.mktemp("ladder") / "tasks"
    done = run("export", "--release", release, "--verifier-mode", "separate", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_every_class_has_a_rule_and_a_search_whose_budget_the_ladder_sets():
    from orharbor.benchmark.ladder import LadderError, program

    for problem in problem_modules.PROBLEMS:
        rule, search = program(problem, "rule", 3), program(problem, "search", 3.5)
        assert "TIME_LIMIT_S = 3.5\n" in search and "TIME_LIMIT_S = 3.5" not in rule
    with pytest.raises(LadderError, match="no ladder policy 'magic'"):
        program("jobshop", "magic", 1)


def _naive_rewards(release, task_id: str) -> tuple[float, ...]:
    """What the naive answer of each instance of a release's row must score: 0.0, or 1.0 where the row's
    sub-second reference did no better than naive (no room between the two: matching is all there is)."""
    from orharbor.datasets.rows import read_rows
    from orharbor.verifiers.reward import reward

    row = next(r for path in release.glob("*.jsonl") for r in read_rows(path) if r["id"] == task_id)
    if row["level"] == 1:
        return (reward(row["baseline"], row["baseline"], row["reference"]),)
    return tuple(reward(n, n, ref) for n, ref in zip(row["eval_baselines"], row["eval_references"]))


@pytest.mark.sandbox
def test_every_rung_is_scored_by_the_tasks_own_verifier(built, tiny_tasks):
    from orharbor.benchmark.ladder import aggregate, algorithm_tasks, run_policy

    tasks = {task.name: task for task in algorithm_tasks(tiny_tasks, [], None)}
    results = [
        run_policy(tasks[name], policy, 1.0)
        for name in ("jobshop-ta01-l1", "rcpsp-j30-l2-s1000")
        for policy in ("naive", "rule", "search")
    ]
    results.append(run_policy(tasks["jobshop-ta01-l1"], "ortools", 1.0))
    results.append(run_policy(tasks["rcpsp-j30-l2-s1000"], "ortools", 1.0))
    by = {(r.task, r.policy): r for r in results}
    for task in ("jobshop-ta01-l1", "rcpsp-j30-l2-s1000"):
        naive = by[(task, "naive")]
        assert naive.error is None and naive.instance_rewards == _naive_rewards(built[1], task)
        rule, search = by[(task, "rule")], by[(task, "search")]
        assert rule.error is None and rule.reward > -1.0
        # the search starts from the rule's answer and keeps the best: never worse, on every instance
        assert all(s >= r - 1e-9 for s, r in zip(search.instance_rewards, rule.instance_rewards))
    assert len(by[("rcpsp-j30-l2-s1000", "rule")].instance_rewards) == 2  # one per hidden instance
    ta01 = by[("jobshop-ta01-l1", "ortools")]
    assert ta01.error is None and ta01.gap_bks >= 0  # nothing beats ta01's proven optimum 1231
    assert by[("rcpsp-j30-l2-s1000", "ortools")].error.startswith("the ortools rung runs at level 1 only")
    rows = aggregate(results, ["naive", "rule", "search", "ortools"])
    assert [(r["problem"], r["size"], r["level"]) for r in rows] == [("jobshop", "15x15", 1), ("rcpsp", "j30", 2)]
    assert rows[0]["policies"]["naive"]["mean"] == by[("jobshop-ta01-l1", "naive")].reward
    assert rows[0]["policies"]["rule"]["n"] == 1
    assert rows[0]["ceiling"] >= 1.0 and rows[1]["ceiling"] is None  # a proved bound is never above the reference


def test_the_ceiling_is_the_reward_of_an_answer_at_the_proved_bound():
    from orharbor.benchmark.ladder import ceiling

    assert ceiling({"reference": 80, "baseline": 100, "bound": 70}) == 1.5
    assert ceiling({"reference": 80, "baseline": 100, "bound": 80}) == 1.0  # the reference is optimal
    assert ceiling({"reference": 5, "baseline": 100, "bound": -3.5}) == 100 / 95  # no objective is below 0
    assert ceiling({"reference": 80, "baseline": 100}) is None  # no bound recorded (level 2)
    assert ceiling({"reference": 100, "baseline": 100, "bound": 90}) is None


def test_the_ladders_verdict_names_what_a_tier_fails():
    from orharbor.benchmark.ladder import verdict

    def stats(**means):
        return {policy: {"mean": mean} for policy, mean in means.items()}

    assert verdict(stats(naive=0, rule=0.4, search=0.7, ortools=0.9)) == "ok"
    assert verdict(stats(naive=0, rule=0.4, search=1.1, ortools=0.9)) == "ok"  # search may beat a generic solver
    assert verdict(stats(naive=0, rule=0.4, search=0.3, ortools=0.9)) == "search < rule"
    assert verdict(stats(naive=0, rule=1.0, search=1.0, ortools=1.0)) == "rule not inside (0, 1); saturated"
    assert verdict(stats(naive=0, rule=0.0, search=0.01, ortools=0.0)) == "rule not inside (0, 1); dead"


@pytest.mark.slow
@pytest.mark.sandbox
def test_harbor_runs_the_smoke_subset_by_name_and_report_gives_the_gap_to_the_best_known(built, tmp_path):
    """`harbor run -d NAME@VERSION-smoke` with Harbor's oracle on the bubblewrap environment: 1.0 everywhere."""
    from click.testing import CliRunner

    from orharbor.cli import main
    from harbor_runs import harbor_run

    _, release, _ = built
    smoke = tmp_path / "smoke"
    assert run("export", "--release", release, "--smoke", "--verifier-mode", "separate", "--out", smoke).returncode == 0
    job, trials = harbor_run(
        ["-d", "tiny-bench@0.1-smoke", "--registry-path", str(smoke / "registry.json"), "-a", "oracle"],
        tmp_path / "jobs",
        "smoke",
    )
    assert job["n_total_trials"] == len(trials) == 4
    for trial in trials:
        assert trial["exception_info"] is None and trial["verifier_result"]["rewards"] == {"reward": 1.0}
    result = CliRunner().invoke(main, ["report", str(tmp_path / "jobs"), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {(r["problem"], r["level"]): r for r in json.loads(result.stdout)["algorithm"]}
    ta01 = read_rows(release / "jobshop-taillard.jsonl")[0]
    assert rows[("jobshop", 1)]["gap_best"] == pytest.approx((ta01["reference"] - 1231) / 1231)
    assert rows[("rcpsp", 1)]["gap_best"] is None
