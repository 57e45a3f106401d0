"""export --for CONSUMER, --image-prefix, `orharbor images` and registry.json's git form, judged by Harbor's code.

A profile changes only what its consumer's loader needs (src/orharbor/exporter/profiles.py
says which code each was read from); every profile's export must still score as the
default one does under Harbor (oracle 1.0, nothing -1.0) and hold the attacks.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from harbor.environments.definition import should_use_prebuilt_docker_image
from harbor.models.task.config import TaskConfig
from harbor.registry.client.factory import RegistryClientFactory

from harbor_runs import harbor_run
from orharbor import check
from orharbor.cli import main
from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.dataset_index import GitSource, write_dataset_index
from orharbor.exporter.task_dir import ExportOptionError
from orharbor.task_template.verify import BUNDLE, LAYOUT, describe

PREFIX = "registry.example.com/team/orharbor"


def _row(shipped_rows, level: int) -> dict:
    return next(r for r in shipped_rows if (r["problem"], r["level"], r["size"]) == ("jobshop", level, "4x4"))


def _export(shipped_rows, tmp_path: Path, level: int, **options) -> Path:
    folder = tmp_path / "-".join(f"{k}={v}" for k, v in options.items()).replace("/", "_")
    folder.mkdir(exist_ok=True)
    return export_row(_row(shipped_rows, level), folder, ExportOptions(**options))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"consumer": "unknown"}, "unknown consumer"),
        ({"consumer": "tinker"}, "shared mode only"),
        ({"consumer": "prime"}, "--image-prefix"),
        ({"image_prefix": "Registry.example.com/Orharbor"}, "lower case"),
        ({"image_prefix": "registry.example.com/orharbor:tag"}, "no tag"),
    ],
)
def test_options_a_consumer_cannot_take_are_refused(options, message):
    with pytest.raises(ExportOptionError, match=message):
        ExportOptions(**options)


def test_tinker_tests_are_flat_text_that_rebuild_the_shared_tree(shipped_rows, tmp_path):
    """Tinker uploads only top-level files of tests/, read as text: every file is one, and layout.json
    rebuilds exactly the tree a shared-mode export ships, its bundle unpacked (manifest and layout aside)."""
    flat = _export(shipped_rows, tmp_path, 2, consumer="tinker", verifier_mode="shared") / "tests"
    tree = _export(shipped_rows, tmp_path, 2, verifier_mode="shared") / "tests"
    entries = list(flat.iterdir())
    assert all(p.is_file() for p in entries), [p.name for p in entries if not p.is_file()]
    for path in entries:
        data = path.read_bytes()
        data.decode("utf-8")
        assert b"\r" not in data, path.name
    layout = json.loads((flat / LAYOUT).read_text())
    rebuilt = {layout.get(p.name, p.name): p.read_bytes() for p in entries if p.name not in (LAYOUT, "manifest.json")}
    shipped = {
        p.relative_to(tree).as_posix(): p.read_bytes()
        for p in tree.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    with zipfile.ZipFile(io.BytesIO(shipped.pop(BUNDLE))) as bundle:  # a flat folder holds the bundle's tree
        shipped.update({name: bundle.read(name) for name in bundle.namelist() if not name.endswith(".pyc")})
    flat_task = json.loads(rebuilt.pop("task.json"))
    assert flat_task["metadata"].pop("consumer") == "tinker"  # task.toml's metadata, which task.json repeats
    assert flat_task == json.loads(shipped.pop("task.json"))
    assert rebuilt == shipped
    assert "eval/eval_000.json" in rebuilt.keys() and "orharbor/verifiers/main.py" in rebuilt.keys()
    manifest = json.loads((flat / "manifest.json").read_text())
    assert manifest == {**describe(str(flat))}, "the manifest checks the flat folder Tinker uploads"


def _score_locally(task: Path, tmp_path: Path, solution: Path) -> dict:
    """The task's own tests/verify.py on ``solution``, as test.sh runs it (python3 -I -S -B), outside a container."""
    logs = tmp_path / f"logs-{task.parent.name}-{solution.parent.name}"
    logs.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-B",
            str(task / "tests" / "verify.py"),
            "--deliverable",
            str(solution),
            "--logs-dir",
            str(logs),
        ],
        check=True,
        timeout=300,
    )
    return json.loads((logs / "reward.json").read_text())


def test_a_flat_verifier_scores_as_the_tree_does(shipped_rows, tmp_path):
    """verify.py rebuilds the bundle from the flat folder and scores the oracle 1.0 and the naive answer 0.0."""
    task = _export(shipped_rows, tmp_path, 1, consumer="tinker", verifier_mode="shared")
    assert not (task / "tests" / "orharbor").exists()
    assert _score_locally(task, tmp_path, task / "solution" / "solution.json") == {"reward": 1.0}
    assert _score_locally(task, tmp_path, task / "solution" / "naive" / "solution.json") == {"reward": 0.0}


def test_a_tinker_export_says_which_grader_timeout_its_verifiers_need(tmp_path):
    """Tinker ignores task.toml's verifier budget (its grader default is 60 s): export names the one to set."""
    out = tmp_path / "tinker"
    done = CliRunner().invoke(main, ["export", "--out", str(out), "--problem", "jobshop", "--for", "tinker"])
    assert done.exit_code == 0, done.output
    budgets = [tomllib.loads(p.read_text())["verifier"]["timeout_sec"] for p in out.glob("*/task.toml")]
    assert max(budgets) > 60
    assert f"grader_timeout={int(max(budgets))}" in done.output


def test_orharbor_verify_reads_a_flat_level2_task(shipped_rows, tmp_path):
    """`orharbor verify` (and check, through the same TaskFolder.tests) finds the hidden instances of a flat tests/."""
    task = _export(shipped_rows, tmp_path, 2, consumer="tinker", verifier_mode="shared")
    assert not (task / "tests" / "eval").exists()
    done = CliRunner().invoke(main, ["verify", str(task), "--solution", str(task / "solution" / "solve.py"), "--json"])
    assert done.exit_code == 0, done.output
    details = json.loads(done.output)
    assert details["reward"] == 1.0 and len(details["instances"]) == 3


def test_prime_gets_a_hook_without_user_that_insists_on_root(shipped_rows, tmp_path):
    """verifiers 0.4.0 refuses a collect hook with `user`; Prime's hook names none and exits 1 unless root."""
    prime = TaskConfig.model_validate(
        tomllib.loads(
            (_export(shipped_rows, tmp_path, 1, consumer="prime", image_prefix=PREFIX) / "task.toml").read_text()
        )
    )
    default = TaskConfig.model_validate(tomllib.loads((_export(shipped_rows, tmp_path, 1) / "task.toml").read_text()))
    [hook], [default_hook] = prime.verifier.collect, default.verifier.collect
    assert hook.user is None and str(default_hook.user) == "root"
    assert hook.command.endswith('; [ "$(id -u)" = 0 ]') and default_hook.command.endswith("; true")
    assert hook.command.removesuffix('; [ "$(id -u)" = 0 ]') == default_hook.command.removesuffix("; true")


def test_image_prefix_names_prebuilt_images_harbor_uses(shipped_rows, tmp_path):
    """task.toml's docker_image (agent and separate verifier), validated by Harbor's TaskConfig; Harbor pulls
    them unless told to build, and keeps the Dockerfiles to build from with --force-build."""
    task = _export(shipped_rows, tmp_path, 2, image_prefix=PREFIX)
    config = TaskConfig.model_validate(tomllib.loads((task / "task.toml").read_text()))
    assert config.environment.docker_image == f"{PREFIX}:{task.name}"
    assert config.verifier.environment.docker_image == f"{PREFIX}-verifier:{task.name}"
    assert should_use_prebuilt_docker_image(
        task / "environment", docker_image=config.environment.docker_image, force_build=False
    )
    assert not should_use_prebuilt_docker_image(
        task / "environment", docker_image=config.environment.docker_image, force_build=True
    )
    shared = _export(shipped_rows, tmp_path, 1, image_prefix=PREFIX, verifier_mode="shared")
    assert "docker_image" not in tomllib.loads((shared / "task.toml").read_text())["verifier"].get("environment", {})


def test_images_plan_builds_every_named_image_and_pushes_only_where_named(shipped_rows, tmp_path):
    out = tmp_path / "export"
    runner = CliRunner()
    done = runner.invoke(main, ["export", "--out", str(out), "--problem", "jobshop", "--image-prefix", PREFIX])
    assert done.exit_code == 0, done.output
    tasks = sorted(p.parent.name for p in out.glob("*/task.toml"))
    plan = runner.invoke(main, ["images", str(out), "--plan", "--push", "registry.example.com"])
    assert plan.exit_code == 0, plan.output
    lines = plan.output.splitlines()
    builds = [line for line in lines if line.startswith("podman build ")]
    assert len(builds) == 2 * len(tasks)  # separate mode: an agent and a verifier image per task
    task = tasks[0]
    assert (
        f"podman build --tag {PREFIX}:{task} --file {out / task / 'environment' / 'Dockerfile'} "
        f"{out / task / 'environment'}"
    ) in lines
    tests = out / task / "tests"
    assert f"podman build --tag {PREFIX}-verifier:{task} --file {tests / 'Dockerfile'} {tests}" in lines
    assert lines.index(f"podman push {PREFIX}:{task}") > max(lines.index(b) for b in builds)
    elsewhere = runner.invoke(main, ["images", str(out), "--plan", "--push", "other.example.com"])
    assert elsewhere.exit_code != 0 and "another registry" in elsewhere.output
    bare = tmp_path / "bare"
    assert runner.invoke(main, ["export", "--out", str(bare), "--problem", "jobshop"]).exit_code == 0
    refused = runner.invoke(main, ["images", str(bare), "--plan"])
    assert refused.exit_code != 0 and "--image-prefix" in refused.output


def _git(*args, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True
    )


def _download(registry: Path, out: Path) -> list[Path]:
    """Harbor's own `download --export` path: its registry client's download_dataset."""
    client = RegistryClientFactory.create(registry_path=registry)
    items = asyncio.run(
        client.download_dataset(
            "orharbor@" + json.loads(registry.read_text())[0]["version"], output_dir=out, export=True
        )
    )
    return [item.downloaded_path for item in items]


def test_harbor_download_copies_a_git_registry_and_not_a_path_one(shipped_rows, tmp_path):
    """registry.json by path: Harbor hands back the task where it is (nothing copied). By git coordinates
    (--git-url), Harbor clones and copies each task, byte for byte."""
    repo = tmp_path / "repo"
    export = repo / "tasks"
    export.mkdir(parents=True)
    task = export_row(_row(shipped_rows, 1), export, ExportOptions())
    write_dataset_index(export)
    [by_path] = _download(export / "registry.json", tmp_path / "by-path")
    assert by_path == task.resolve() and not (tmp_path / "by-path").exists()
    write_dataset_index(export, git=GitSource(repo.as_uri(), "tasks"))
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "tasks", cwd=repo)
    [copied] = _download(export / "registry.json", tmp_path / "by-git")
    assert copied.is_relative_to(tmp_path / "by-git") and copied.name == task.name
    files = sorted(p.relative_to(task) for p in task.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(copied) for p in copied.rglob("*") if p.is_file())
    assert all((task / f).read_bytes() == (copied / f).read_bytes() for f in files)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("consumer", ["tinker", "prime"])
def test_each_profile_scores_as_the_default_under_harbor(shipped_rows, tmp_path, consumer):
    """harbor run (bubblewrap) of the profile's export: oracle 1.0 and nop -1.0 at both levels, as the default."""
    options = (
        {"consumer": consumer, "verifier_mode": "shared"}
        if consumer == "tinker"
        else {"consumer": consumer, "image_prefix": PREFIX}
    )
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for level in (1, 2):
        export_row(_row(shipped_rows, level), tasks, ExportOptions(**options))
    for agent, reward in (("oracle", 1.0), ("nop", -1.0)):
        _, trials = harbor_run(["-p", str(tasks), "-a", agent], tmp_path / "jobs", f"{consumer}-{agent}")
        assert len(trials) == 2
        assert [t["verifier_result"]["rewards"] for t in trials] == [{"reward": reward}] * 2, trials


#: A representative subset of the attack suite: the answers, the reward file, the interpreter and the tests.
ATTACKS = ("oracle", "naive", "nothing", "reward-file", "sitecustomize", "read-tests", "other-instance")


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("consumer", ["tinker", "prime"])
def test_attacks_hold_on_each_profile(shipped_rows, tmp_path, consumer):
    """check --attacks on a level-2 job shop task of the profile: no attack above -1.0."""
    row = dict(_row(shipped_rows, 2))
    for key in (
        "eval_seeds",
        "eval_references",
        "eval_baselines",
        "eval_reference_solutions",
        "eval_baseline_solutions",
        "eval_reference_metas",
    ):
        row[key] = row[key][:2]
    row["solve_time_limit_s"] = 10.0
    options = (
        {"consumer": consumer, "verifier_mode": "shared"}
        if consumer == "tinker"
        else {"consumer": consumer, "image_prefix": PREFIX}
    )
    task = export_row(row, tmp_path, ExportOptions(**options))
    [result] = check.check_tasks(task, jobs=2, attacks=True, only=ATTACKS)
    assert {"reward-file", "sitecustomize", "read-tests", "other-instance"} <= {p.policy for p in result.policies}
    assert result.ok, result.problem_text()


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_prime_hook_without_user_is_the_defence_it_was(shipped_rows, tmp_path):
    """Shared mode: a folder at /logs/verifier/test-stdout.txt stops Harbor's run of test.sh. Prime's user-free
    hook (run as root, the image's default user) clears it as the default hook does; without it the attack wins."""
    from test_attacks import _mutate

    task = export_row(
        _row(shipped_rows, 1),
        tmp_path / "prime",
        ExportOptions(consumer="prime", image_prefix=PREFIX, verifier_mode="shared"),
    )
    [defended] = check.check_tasks(task, jobs=2, attacks=True, only=("stdout-dir",))
    assert [p.policy for p in defended.policies] == ["stdout-dir"] and defended.ok, defended.problem_text()
    weakened = _mutate(task, tmp_path / "weakened", [("../task.toml", 'command = "for round', 'command = "true" # ')])
    [result] = check.check_tasks(weakened, jobs=2, attacks=True, only=("stdout-dir",))
    [outcome] = result.policies
    assert not outcome.ok, outcome


@pytest.mark.slow
def test_for_tinker_beats_a_release_recipes_mode_but_not_an_explicit_flag(tmp_path):
    """--for tinker exports a release (its recipe says separate) in shared mode; --verifier-mode separate is refused."""
    release = Path(__file__).resolve().parents[1] / "benchmarks" / "orharbor-bench-1"
    runner = CliRunner()
    done = runner.invoke(
        main, ["export", "--release", str(release), "--smoke", "--for", "tinker", "--out", str(tmp_path / "smoke")]
    )
    assert done.exit_code == 0, done.output
    modes = {
        tomllib.loads(p.read_text())["verifier"]["environment_mode"] for p in (tmp_path / "smoke").glob("*/task.toml")
    }
    assert modes == {"shared"}
    refused = runner.invoke(
        main,
        [
            "export",
            "--release",
            str(release),
            "--smoke",
            "--for",
            "tinker",
            "--verifier-mode",
            "separate",
            "--out",
            str(tmp_path / "refused"),
        ],
    )
    assert refused.exit_code != 0 and "shared mode only" in refused.output
