"""The orharbor command line, driven through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from orharbor.cli import expand_multi_value, main
from orharbor.datasets.rows import read_rows
from orharbor import problem_modules

js = problem_modules.get("jobshop")


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_clean_error(result, message: str) -> None:
    """A user error: non-zero exit through SystemExit, an 'Error:' line, no traceback."""
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "Error: " in result.output
    assert message in result.output, result.output


@pytest.fixture(scope="module")
def cli_dataset(tmp_path_factory) -> Path:
    """A 3-row level-1 dataset built by the CLI with --sizes 4x4 6x6."""
    out = tmp_path_factory.mktemp("ds") / "jobshop.jsonl"
    result = run(
        "build-dataset",
        "--problem",
        "jobshop",
        "--sizes",
        "4x4",
        "6x6",
        "--level",
        "1",
        "--num-rows",
        "3",
        "--reference-time-limit",
        "1",
        "--workers",
        "1",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def cli_tasks(cli_dataset, tmp_path_factory) -> Path:
    """The dataset exported as task directories by the CLI."""
    out = tmp_path_factory.mktemp("tasks")
    result = run("export", "--dataset", cli_dataset, "--out", out)
    assert result.exit_code == 0, result.output
    return out


# ------------------------------------------------------------------ expand_multi_value


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--sizes", "a", "b", "--level", "1"], ["--sizes", "a", "--sizes", "b", "--level", "1"]),
        (["--sizes", "a"], ["--sizes", "a"]),
        (["--sizes", "a", "--level", "1"], ["--sizes", "a", "--level", "1"]),
        (
            ["export", "--dataset", "x", "y", "z", "--out", "d"],
            ["export", "--dataset", "x", "--dataset", "y", "--dataset", "z", "--out", "d"],
        ),
        (["--level", "1", "2"], ["--level", "1", "2"]),  # not a multi-value option: untouched
        (["--sizes", "a", "--sizes", "b"], ["--sizes", "a", "--sizes", "b"]),
        ([], []),
    ],
    ids=["two-values", "one-value", "one-then-flag", "three-datasets", "other-option", "already-repeated", "empty"],
)
def test_expand_multi_value(args, expected):
    """'--opt a b' becomes '--opt a --opt b' for multi-value options only."""
    assert expand_multi_value(args) == expected


# ------------------------------------------------------------------ problems / generate


def test_problems_lists_jobshop():
    """`problems` shows jobshop with all its sizes, its baseline description and its reference method."""
    result = run("problems")
    assert result.exit_code == 0
    assert result.output.startswith(f"jobshop  ({js.TITLE}; minimise {js.OBJECTIVE})")
    assert f"sizes:    {', '.join(js.SIZES)}" in result.output
    assert f"baseline: {' '.join(js.BASELINE.split())}" in result.output
    assert f"reference: {js.REFERENCE}" in result.output
    assert "formats:  json, taillard, orlib" in result.output


def test_generate_json():
    """`generate jobshop 4x4 --seed 3` prints the JSON of generate(3, '4x4')."""
    result = run("generate", "--problem", "jobshop", "--size", "4x4", "--seed", "3")
    assert result.exit_code == 0
    assert json.loads(result.output) == js.generate(3, "4x4")
    assert json.loads(result.output) != js.generate(4, "4x4")


@pytest.mark.parametrize("fmt", js.FORMATS)
def test_generate_standard_format_reads_back(fmt, tmp_path):
    """`--format taillard|orlib` output reads back to the same machines and durations."""
    result = run("generate", "--problem", "jobshop", "--size", "6x6", "--seed", "2", "--format", fmt)
    assert result.exit_code == 0
    path = tmp_path / "inst.txt"
    path.write_text(result.output)
    back = js.read(path, fmt)
    original = js.generate(2, "6x6")
    for key in ("n_jobs", "n_machines", "machines", "durations"):
        assert back[key] == original[key], key


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "--problem", "jobshp", "--size", "4x4"], "unknown problem 'jobshp'; did you mean 'jobshop'?"),
        (["generate", "--problem", "knapsack", "--size", "4x4"], "unknown problem 'knapsack' (known: jobshop, "),
        (["generate", "--problem", "jobshop", "--size", "5x5"], "unknown jobshop size '5x5'; valid sizes: 4x4, 6x6"),
        (
            ["generate", "--problem", "jobshop", "--size", "4x4", "--format", "csv"],
            "unknown jobshop format 'csv'; known: taillard, orlib",
        ),
        (["generate", "--problem", "jobshop", "--size", "4x4", "--seed", "-1"], "Invalid value for '--seed'"),
    ],
    ids=["close-problem", "far-problem", "unknown-size", "unknown-format", "negative-seed"],
)
def test_generate_user_errors(args, message):
    """Bad names, sizes, formats and seeds give a one-line error, not a traceback."""
    assert_clean_error(run(*args), message)


# ------------------------------------------------------------------ solve


def solve(path: Path):
    """`solve --problem jobshop PATH` with the reference on one thread (a 60 s limit, far above the
    milliseconds these instances take, so it is not what decides the answer)."""
    return run("solve", "--problem", "jobshop", path, "--reference-time-limit", "60", "--solver-workers", "1")


def _check_solve_output(result, instance: dict) -> None:
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["objective"] == js.evaluate(instance, out["solution"])
    assert out["baseline"] == js.evaluate(instance, js.baseline(instance))
    assert out["objective"] <= out["baseline"]
    assert out["bound"] <= out["objective"]
    assert out["status"] in ("OPTIMAL", "FEASIBLE", "FEASIBLE_HINT")  # what any limit may give
    if out["status"] == "OPTIMAL":
        assert out["bound"] == out["objective"]


def test_solve_json_instance(tmp_path):
    """`solve` on a generated JSON instance prints a verified objective no worse than the baseline."""
    instance = js.generate(1, "4x4")
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(instance))
    _check_solve_output(solve(path), instance)


def test_solve_taillard_file(tmp_path):
    """`solve` reads a Taillard-format file and its objective is verified against that instance."""
    path = tmp_path / "inst.txt"
    path.write_text(js.write(js.generate(5, "6x6"), "taillard"))
    instance = js.read(path)
    _check_solve_output(solve(path), instance)


def test_solve_broken_file(tmp_path):
    """`solve` on a broken Taillard file reports the file and line, without a traceback."""
    text = js.write(js.generate(0, "4x4"), "taillard").splitlines()
    text[3] = text[3] + " 7"  # first durations row gets a fifth number
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(text) + "\n")
    assert_clean_error(solve(path), "bad.txt:4: expected 4 integers, got 5")


def test_solve_unknown_problem(tmp_path):
    """`solve` with an unknown problem name gives a clean error."""
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(js.generate(0, "4x4")))
    assert_clean_error(run("solve", "--problem", "jobshp", path), "did you mean 'jobshop'?")


# ------------------------------------------------------------------ build-dataset


def test_build_dataset_rows(cli_dataset):
    """build-dataset with '--sizes 4x4 6x6' writes 3 valid rows cycling 4x4, 6x6, 4x4."""
    rows = read_rows(cli_dataset)
    assert [r["size"] for r in rows] == ["4x4", "6x6", "4x4"]
    assert [r["instance_seed"] for r in rows] == [0, 1, 2]
    for r in rows:
        instance = js.generate(r["instance_seed"], r["size"])
        assert js.evaluate(instance, r["reference_solution"]) == r["reference"] <= r["baseline"]


def test_build_dataset_unknown_size(tmp_path):
    """build-dataset with an unknown size fails cleanly, naming it, and writes nothing."""
    out = tmp_path / "x.jsonl"
    result = run(
        "build-dataset",
        "--problem",
        "jobshop",
        "--sizes",
        "4x4",
        "9x9",
        "--num-rows",
        "2",
        "--workers",
        "1",
        "--out",
        out,
    )
    assert_clean_error(result, "unknown size '9x9' for jobshop")
    assert not out.exists()


def test_build_dataset_unknown_problem(tmp_path):
    """build-dataset with a misspelt problem suggests the right one."""
    result = run(
        "build-dataset", "--problem", "jobshp", "--sizes", "4x4", "--num-rows", "1", "--out", tmp_path / "x.jsonl"
    )
    assert_clean_error(result, "did you mean 'jobshop'?")


# ------------------------------------------------------------------ export


TASK_FILES = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh")


def task_names(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.is_dir())


def test_export_writes_one_task_per_row(cli_dataset, cli_tasks):
    """export writes one task directory per row, each with the Harbor task files, and the index beside them."""
    ids = [r["id"] for r in read_rows(cli_dataset)]
    assert task_names(cli_tasks) == sorted(ids)
    assert {p.name for p in cli_tasks.iterdir() if p.is_file()} == {"registry.json", "dataset.toml", ".gitattributes"}
    for task_id in ids:
        for name in TASK_FILES:
            assert (cli_tasks / task_id / name).is_file(), f"{task_id}/{name}"


def test_export_broken_dataset_names_line(cli_dataset, tmp_path):
    """export of a dataset whose line 2 is broken fails cleanly with 'file:2'."""
    lines = cli_dataset.read_text().splitlines()
    row = json.loads(lines[1])
    row["level"] = 7
    lines[1] = json.dumps(row)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "tasks"
    assert_clean_error(run("export", "--dataset", bad, "--out", out), "bad.jsonl:2: level: 7 is not one of")
    assert not out.exists() or not any(out.iterdir())


def test_export_duplicate_ids(cli_dataset, tmp_path):
    """Exporting the same dataset twice in one call is refused: ids would collide."""
    result = run("export", "--dataset", cli_dataset, cli_dataset, "--out", tmp_path / "tasks")
    assert_clean_error(result, "duplicate row id 'jobshop-4x4-l1-s0'")


def test_export_problem_keeps_only_that_class_of_the_shipped_dataset(tmp_path):
    """--problem without --dataset exports the shipped rows of that class and no specs."""
    out = tmp_path / "tasks"
    result = run("export", "--problem", "timetabling", "--out", out)
    assert result.exit_code == 0, result.output
    names = task_names(out)
    assert names and all(name.startswith("timetabling-") for name in names), names


def test_export_registry_lists_earlier_tasks_and_prints_the_run_command(cli_dataset, tmp_path):
    """A second export into the same --out adds its tasks to registry.json; the output says how to run them."""
    from orharbor.exporter.dataset_index import package_version

    out = tmp_path / "tasks"
    assert run("export", "--problem", "vrptw", "--out", out).exit_code == 0
    result = run("export", "--dataset", cli_dataset, "--out", out)
    assert result.exit_code == 0, result.output
    [dataset] = json.loads((out / "registry.json").read_text())
    assert (dataset["name"], dataset["version"]) == ("orharbor", package_version())
    assert sorted(t["name"] for t in dataset["tasks"]) == task_names(out)
    assert {t["path"] for t in dataset["tasks"]} == {str((out / name).resolve()) for name in task_names(out)}
    assert f"harbor run -d orharbor@{package_version()} --registry-path {out / 'registry.json'}" in result.output


def test_export_keeps_other_datasets_and_a_users_gitattributes(cli_dataset, tmp_path):
    """registry.json keeps datasets of other names; a different .gitattributes in --out is left alone."""
    out = tmp_path / "tasks"
    out.mkdir()
    mine = {"name": "mine", "version": "1", "description": "", "tasks": [], "metrics": []}
    (out / "registry.json").write_text(json.dumps([mine, {"name": "orharbor", "version": "0.0.1", "tasks": []}]))
    (out / ".gitattributes").write_text("* text=auto\n")
    result = run("export", "--dataset", cli_dataset, "--out", out)
    assert result.exit_code == 0, result.output
    datasets = json.loads((out / "registry.json").read_text())
    assert datasets[0] == mine and [d["name"] for d in datasets] == ["mine", "orharbor"]
    assert (out / ".gitattributes").read_text() == "* text=auto\n"
    assert "kept the existing" in result.stderr


def test_export_base_image_reaches_every_dockerfile(cli_dataset, tmp_path):
    """--base-image lands on the FROM line of the agent and verifier images, algorithm and modelling alike."""
    from orharbor.modelling.spec import shipped_specs_dir

    image = "localhost/python-ca:3.12"
    out = tmp_path / "tasks"
    for source in (["--dataset", cli_dataset], ["--specs", shipped_specs_dir()]):
        result = run("export", *source, "--out", out, "--base-image", image)
        assert result.exit_code == 0, result.output
    dockerfiles = sorted(out.glob("*/*/Dockerfile"))
    assert len(dockerfiles) == 2 * len(task_names(out))
    assert all(f"FROM {image}\n" in path.read_text() for path in dockerfiles)


@pytest.mark.parametrize("image", ["", "python:3.12 AS build", "python:3.12\nRUN id", "\tpython"])
def test_export_refuses_a_base_image_that_is_not_one_token(tmp_path, image):
    """A base image with whitespace or control characters would rewrite the Dockerfile: a usage error."""
    result = run("export", "--problem", "jobshop", "--out", tmp_path / "tasks", "--base-image", image)
    assert result.exit_code == 2 and "Invalid value for '--base-image'" in result.output
    assert "base image must be one image reference" in result.output
    assert not (tmp_path / "tasks").exists()


def test_export_unknown_problem_is_a_clean_error(tmp_path):
    assert_clean_error(
        run("export", "--problem", "jobshp", "--out", tmp_path / "tasks"),
        "unknown problem 'jobshp'; did you mean 'jobshop'?",
    )


# ------------------------------------------------------------------ verify


def _verify_output(result) -> dict:
    """The details `verify --json` prints: one JSON object, the whole of stdout."""
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_verify_oracle_solution_scores_one(cli_dataset, cli_tasks):
    """verify --json with the task's own solution/solution.json prints reward 1.0."""
    row = read_rows(cli_dataset)[0]
    task = cli_tasks / row["id"]
    out = _verify_output(run("verify", task, "--solution", task / "solution" / "solution.json", "--json"))
    assert {k: out[k] for k in ("reward", "feasible", "objective", "naive", "reference", "error")} == {
        "reward": 1.0,
        "feasible": 1,
        "objective": row["reference"],
        "naive": row["baseline"],
        "reference": row["reference"],
        "error": None,
    }


def test_verify_naive_solution_scores_zero(cli_dataset, cli_tasks):
    """verify with the naive baseline's solution: reward 0.0, as JSON and in the readable summary."""
    row = read_rows(cli_dataset)[1]
    task = cli_tasks / row["id"]
    naive = task / "solution" / "naive" / "solution.json"
    out = _verify_output(run("verify", task, "--solution", naive, "--json"))
    assert out["reward"] == 0.0 and out["objective"] == row["baseline"]
    text = run("verify", task, "--solution", naive)
    assert text.exit_code == 0
    assert text.stdout.splitlines()[0] == (
        f"reward 0.0000  objective {row['baseline']} (naive {row['baseline']}, reference {row['reference']})"
    )


def test_verify_infeasible_solution_scores_fail(cli_dataset, cli_tasks, tmp_path):
    """verify with an infeasible solution prints reward -1.0 and the reason."""
    row = read_rows(cli_dataset)[0]
    task = cli_tasks / row["id"]
    starts = [[0] * 4 for _ in range(4)]  # every operation at time 0
    bad = tmp_path / "solution.json"
    bad.write_text(json.dumps({"starts": starts}))
    out = _verify_output(run("verify", task, "--solution", bad, "--json"))
    assert out["reward"] == -1.0 and out["feasible"] == 0
    assert out["error"].startswith("infeasible: job 0 operation 1 starts at 0 before its predecessor ends at")


def test_verify_not_a_task_directory(tmp_path):
    """verify on a directory that is not a task gives a clean error."""
    solution = tmp_path / "solution.json"
    solution.write_text("{}")
    assert_clean_error(run("verify", tmp_path, "--solution", solution), "task.json")


def test_solve_json_instance_missing_key(tmp_path):
    """solve on a JSON instance missing a key gives a clean error naming the key."""
    path = tmp_path / "inst.json"
    path.write_text(json.dumps({"n_jobs": 2}))
    assert_clean_error(solve(path), "n_machines")


def test_the_commands_are_python_functions(cli_dataset, tmp_path):
    """orharbor.api does what the commands do, without click: the same refusals, the same tasks."""
    from orharbor import api
    from orharbor.files import WouldReplace

    assert json.loads(api.generate("jobshop", "4x4", 3)) == js.generate(3, "4x4")
    plan = api.plan_export(tmp_path / "tasks", [cli_dataset])
    tasks, index = api.export(plan)
    assert [task.name for task in tasks] == plan.ids == [row["id"] for row in read_rows(cli_dataset)]
    assert {path.name for path in index} == {"registry.json", "dataset.toml", ".gitattributes"}
    with pytest.raises(WouldReplace, match="pass --force"):
        api.plan_export(tmp_path / "tasks", [cli_dataset])
    with pytest.raises(api.SameFile):
        api.import_retailopt(cli_dataset, cli_dataset)


@pytest.mark.parametrize("bug", [ValueError("a bug"), KeyError("a bug")], ids=["ValueError", "KeyError"])
def test_a_bug_is_not_shown_as_a_user_error(monkeypatch, bug):
    """Only a UserError becomes one 'Error:' line; any other exception escapes with its traceback."""

    def broken(*args, **kwargs):
        raise bug

    monkeypatch.setattr("orharbor.api.generate", broken)
    result = run("generate", "--problem", "jobshop", "--size", "4x4")
    assert result.exit_code == 1 and result.exception is bug
    assert "Error:" not in result.output


def test_every_command_speaks_one_option_vocabulary():
    """--workers: processes or concurrent runs; --solver-workers: CP-SAT threads; a time limit says whose;
    the problem class is always --problem."""

    def commands(group, prefix=""):
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                yield from commands(command, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}", {opt for param in command.params for opt in param.opts}

    options = dict(commands(main))
    for name, opts in options.items():
        assert not opts & {"--jobs", "--time-limit", "--threads", "--timeout"}, name
    assert {"-j", "--workers"} <= options["check"] and {"-j", "--workers"} <= options["validate-specs"]
    assert {"--problem", "--reference-time-limit", "--solver-workers"} <= options["solve"]
    assert {"--problem", "--size"} <= options["generate"]
    assert {"--problem", "--reference-time-limit", "--solve-time-limit", "--workers", "--solver-workers"} <= options[
        "build-dataset"
    ]
    assert {"--problem", "--agent-timeout"} <= options["export"]


@pytest.mark.slow
def test_module_entry_points_match_the_cli(tmp_path):
    """python -m orharbor.build_dataset / orharbor.export_harbor take the same flags as the CLI."""
    import subprocess
    import sys

    out = tmp_path / "rows.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "orharbor.build_dataset",
            "--problem",
            "jobshop",
            "--sizes",
            "4x4",
            "6x6",
            "--level",
            "1",
            "--num-rows",
            "2",
            "--reference-time-limit",
            "1",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert [json.loads(line)["size"] for line in out.read_text().splitlines()] == ["4x4", "6x6"]
    subprocess.run(
        [sys.executable, "-m", "orharbor.export_harbor", "--dataset", str(out), "--out", str(tmp_path / "tasks")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert task_names(tmp_path / "tasks") == ["jobshop-4x4-l1-s0", "jobshop-6x6-l1-s1"]


def test_export_env_refuses_before_writing_anything_what_harbor_would_refuse(tmp_path):
    """--env singularity: Harbor's Singularity environment needs a prebuilt image; nothing is written."""
    out = tmp_path / "tasks"
    result = CliRunner().invoke(main, ["export", "--problem", "jobshop", "--out", str(out), "--env", "singularity"])
    assert result.exit_code == 1
    assert "singularity would refuse these tasks" in result.output and "docker_image" in result.output
    assert not out.exists()


def test_export_env_warns_where_the_answer_depends_on_the_machine(tmp_path):
    """--env docker: refused only without Harbor's egress sidecar, so a warning naming --verifier-mode shared."""
    result = CliRunner().invoke(
        main, ["export", "--problem", "jobshop", "--out", str(tmp_path / "t"), "--env", "docker"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: docker (no sidecar)" in result.output and "--verifier-mode shared" in result.output
    shared = CliRunner().invoke(
        main,
        [
            "export",
            "--problem",
            "jobshop",
            "--out",
            str(tmp_path / "s"),
            "--env",
            "docker",
            "--verifier-mode",
            "shared",
        ],
    )
    assert shared.exit_code == 0 and "warning" not in shared.output


def test_export_env_names_the_close_match_of_a_typo(tmp_path):
    """An unknown provider is a usage error that suggests the provider meant."""
    result = CliRunner().invoke(main, ["export", "--out", str(tmp_path / "t"), "--env", "dockr"])
    assert result.exit_code == 2 and "Did you mean 'docker'?" in result.output


def test_the_workflows_run_the_test_command_and_check_with_job_folders_kept():
    """This repository's CI runs .ci/run; the task-repository workflow checks as root and uploads the jobs."""
    import yaml

    repo = Path(__file__).resolve().parents[1]
    ci = yaml.safe_load((repo / ".github" / "workflows" / "ci.yml").read_text())
    steps = [step.get("run", "") for step in ci["jobs"]["test"]["steps"]]
    assert any("bash .ci/run" in run for run in steps)
    tasks = yaml.safe_load((repo / "examples" / "check-tasks.yml").read_text())
    steps = tasks["jobs"]["check"]["steps"]
    check = next(step["run"] for step in steps if "orharbor check" in step.get("run", ""))
    assert check.startswith("sudo ") and "--jobs-dir harbor-jobs" in check
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "harbor-jobs/"


@pytest.mark.slow
def test_providers_is_an_orharbor_command():
    """`orharbor providers` prints the table computed from Harbor's environment classes."""
    result = CliRunner().invoke(main, ["providers", "--format", "markdown"])
    assert result.exit_code == 0, result.output
    rows = {line.split("|")[1].strip(): line for line in result.output.splitlines() if line.startswith("| ")}
    assert rows["daytona"].count("yes") == 4
    assert "no: no-network" in rows["docker (no sidecar)"]


@pytest.mark.parametrize(
    "name, text",
    [
        ("registry.json", "my notes, not JSON\n"),
        ("registry.json", '{"not": "a list"}\n'),
        ("dataset.toml", "this is = not [ a manifest\n"),
    ],
)
def test_export_refuses_to_replace_a_file_of_the_users_beside_the_tasks(tmp_path, name, text):
    """A registry.json or dataset.toml export cannot extend is refused before any task is written, and kept."""
    out = tmp_path / "tasks"
    out.mkdir()
    (out / name).write_text(text)
    result = CliRunner().invoke(main, ["export", "--problem", "jobshop", "--out", str(out)])
    assert result.exit_code == 1 and f"{name} is not" in result.output and "move it away" in result.output
    assert (out / name).read_text() == text
    assert sorted(p.name for p in out.iterdir()) == [name]
