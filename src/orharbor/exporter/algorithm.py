"""Write one Harbor task directory per dataset row.

::

    <task-id>/
      task.toml             built from data in Harbor's TaskConfig shape
      instruction.md        statement, formats with an example, deliverable, budget, scoring
      environment/
        Dockerfile          agent image: pinned base, numpy/scipy (ortools if allowed), /app
        instance.json       level 1: the instance;  examples/*.json  level 2: example instances
      tests/                uploaded only after the agent has finished
        test.sh             runs verify.py with python3 -I; never installs anything
        verify.py           entry of the standard-library verifier bundle
        orharbor.zip        the bundle: orharbor/verifiers/... and the class's verify.py
        task.json           problem, level, naive and reference values, limits
        instance.json | eval/*.json and example.json (a copy of examples/example_0.json)
        Dockerfile          separate verifier mode: the verifier image, tests baked in
      solution/
        solve.sh            the oracle (solution.json or a lookup solve.py beside it)
        naive/              the naive baseline's deliverable, as it would sit in /app

What every kind of task shares is built by :mod:`orharbor.exporter.task_dir`; the
files beside the tasks by :mod:`orharbor.exporter.dataset_index`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from orharbor import problem_modules
from orharbor.datasets.build import complete_row
from orharbor.datasets.rows import RowError, best_known_values
from orharbor.exporter.task_dir import (
    ExportOptions,
    build_task,
    copy_template,
    fresh_task,
    network_text,
    render,
    seal,
    task_toml,
    time_up_text,
    write_json,
    write_task_toml,
    write_tests,
)
from orharbor.files import refuse_existing
from orharbor.image_facts import (
    AGENT_APT_PACKAGES,
    AGENT_USER,
    ORTOOLS_PACKAGE,
    SOLVER_PACKAGES,
    SOLVER_UID,
    SOLVER_VENV,
)
from orharbor.jsonio import canonical, digest
from orharbor.verifiers import contract
from orharbor.verifiers.cpu_calibration import HIGH, LOW, verifier_time_limit_s
from orharbor.verifiers.reward_scale import QUALITY, to_scale
from orharbor.verifiers.solver_run import Limits

#: The deliverable of each level, from the task contract.
DELIVERABLE = {
    kind.level: kind.deliverable
    for kind in contract.KINDS.values()
    if kind.level is not None and kind.deliverable is not None
}  # every level's kind has one
#: Level 2: the naive baseline's answers as data, in solution/ (instance digest -> solution).
NAIVE_ANSWERS = "naive_answers.json"
#: Level 2: the public example solve.py runs on first, in tests/ (a copy of environment/examples/example_0.json).
EXAMPLE_FILE = "example.json"


def export_dataset(
    rows: Iterable[dict],
    out: Path,
    options: ExportOptions = ExportOptions(),
    progress: Callable[[int], None] | None = None,
    force: bool = False,
) -> list[Path]:
    """Export every row under ``out``; return the task directories.

    A task folder of the same id already in ``out`` is an error (checked for
    every row before anything is written) unless ``force``, which replaces it.
    """
    rows = list(rows)
    require_best_known(rows, options.reward_scale)
    refuse_existing([out / row["id"] for row in rows], force)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for row in rows:
        paths.append(export_row(row, out, options, force=force))
        if progress:
            progress(1)
    return paths


def export_row(row: dict, out: Path, options: ExportOptions = ExportOptions(), force: bool = False) -> Path:
    """Write the task directory of one validated row; return its path.

    The task is written into a temporary folder beside its target and renamed
    into place; an existing task folder of the same id is replaced only with ``force``.
    """
    module = problem_modules.get(row["problem"])
    if "instance" not in row and row["generator_version"] != module.GENERATOR_VERSION:
        raise RowError(
            f"{row['id']}: built with generator version {row['generator_version']}, "
            f"but {row['problem']} is at version {module.GENERATOR_VERSION}; rebuild the dataset"
        )
    require_best_known([row], options.reward_scale)
    refuse_existing([out / row["id"]], force)
    row = complete_row(dict(row), options.reference_time_limit_s)
    return build_task(out, row["id"], lambda parent: _write_row_task(module, row, parent / row["id"], options), force)


def _write_row_task(module, row: dict, task: Path, options: ExportOptions) -> Path:
    fresh_task(task)
    config = task_config(module, row, options)
    write = _write_level1 if row["level"] == 1 else _write_level2
    written = replace(write(module, row, task, options, config["metadata"]), reward_scale=options.reward_scale)
    write_tests(task / "tests", written, row["problem"])
    if options.verifier_mode == "separate":
        (task / "tests" / "Dockerfile").write_text(
            render(
                "verifier.Dockerfile",
                {
                    "task_id": row["id"],
                    "base_image": options.base_image,
                    "solver_venv": SOLVER_VENV,
                    "solver_packages": " ".join(_solver_packages(options)),
                },
            )
        )
    write_task_toml(task, config)
    (task / "instruction.md").write_text(instruction(module, row, options))
    seal(task / "tests", config)
    return task


def _write_level1(module, row: dict, task: Path, options: ExportOptions, metadata: dict) -> contract.Level1Task:
    instance = _instance(module, row)
    text = json.dumps(instance, indent=1) + "\n"
    (task / "environment" / "instance.json").write_text(text)
    (task / "tests" / "instance.json").write_text(text)
    write_json(task / "solution" / "solution.json", row["reference_solution"])
    (task / "solution" / "naive").mkdir()
    write_json(task / "solution" / "naive" / "solution.json", row["baseline_solution"])
    copy_template("solve_level1.sh", task / "solution" / "solve.sh", executable=True)
    _write_dockerfile(row, task, options, ["COPY instance.json /app/instance.json"])
    return contract.Level1Task(
        task_id=row["id"],
        deliverables=(DELIVERABLE[1],),
        metadata=metadata,
        problem=row["problem"],
        instance="instance.json",
        instance_sha256=digest(instance),
        naive=row["baseline"],
        reference=row["reference"],
        best_known=_best_knowns(row, 1)[0],
    )


def _write_level2(module, row: dict, task: Path, options: ExportOptions, metadata: dict) -> contract.Level2Task:
    """The hidden instances, the oracle's and the naive baseline's lookup solve.py, the examples.

    The naive answers are also written as data (``solution/naive_answers.json``,
    instance digest -> solution), so ``check``'s attacks answer with them
    without reading generated code.

    The first example is also copied into ``tests/`` (task.json's ``example``,
    with the naive baseline's objective on it): the verifier runs solve.py on
    it before the hidden instances, a run that does not count but whose output
    details.json keeps, since that instance is public. Both lookup programs
    answer it with the naive solution; ``naive_answers.json`` holds the hidden
    instances' answers only.
    """
    (task / "tests" / "eval").mkdir()
    cases, answers, naive = [], {}, {}
    best_known = _best_knowns(row, len(row["eval_seeds"]))
    for i, seed in enumerate(row["eval_seeds"]):
        instance = module.generate(seed, row["size"])
        name = f"eval/eval_{i:03d}.json"
        (task / "tests" / name).write_text(json.dumps(instance) + "\n")
        cases.append(
            contract.Case(
                instance=name,
                instance_sha256=digest(instance),
                naive=row["eval_baselines"][i],
                reference=row["eval_references"][i],
                bound=_bound((row.get("eval_reference_metas") or [{}] * (i + 1))[i]),
                best_known=best_known[i],
            )
        )
        answers[digest(instance)] = row["eval_reference_solutions"][i]
        naive[digest(instance)] = row["eval_baseline_solutions"][i]
    examples = task / "environment" / "examples"
    examples.mkdir()
    example, example_solution = None, None
    for k, seed in enumerate(_example_seeds(row, options)):
        instance = module.generate(seed, row["size"])
        text = json.dumps(instance, indent=1) + "\n"
        (examples / f"example_{k}.json").write_text(text)
        if k == 0:
            (task / "tests" / EXAMPLE_FILE).write_text(text)
            example_solution = module.baseline(instance)
            example = contract.Example(
                instance=EXAMPLE_FILE,
                instance_sha256=digest(instance),
                naive=module.evaluate(instance, example_solution),
            )
    write_json(task / "solution" / NAIVE_ANSWERS, naive)
    if example is not None:  # the naive solution answers the example in both programs (the run does not count)
        answers.setdefault(example.instance_sha256, example_solution)
        naive = {**naive, example.instance_sha256: example_solution}
    (task / "solution" / "solve.py").write_text(lookup_program(answers))
    (task / "solution" / "naive").mkdir()
    (task / "solution" / "naive" / "solve.py").write_text(lookup_program(naive))
    copy_template("solve_level2.sh", task / "solution" / "solve.sh", executable=True)
    _write_dockerfile(row, task, options, ["COPY examples/ /app/examples/"])
    limits = Limits(solve_time_limit_s=float(row["solve_time_limit_s"]), memory_mb=options.solve_memory_mb)
    return contract.Level2Task(
        task_id=row["id"],
        deliverables=(DELIVERABLE[2],),
        metadata=metadata,
        problem=row["problem"],
        cases=tuple(cases),
        run=contract.ProgramRun(python=f"{SOLVER_VENV}/bin/python3", uid=SOLVER_UID, limits=limits),
        example=example,
        reference_workload_s=row.get("reference_workload_s"),
    )


def require_best_known(rows: list[dict], scale: str) -> None:
    """On the quality scale, RowError naming the first row that lacks a best known value (before anything is
    written); nothing on another scale."""
    if scale != QUALITY:
        return
    for row in rows:
        if best_known_values(row) is None:
            key = "best_known" if row["level"] == 1 else "eval_best_known"
            raise RowError(
                f"{row['id']}: --reward-scale quality scores each answer against the best known value "
                f"of its instance, and this row has none ({key}); export it on another scale"
            )


def _example_seeds(row: dict, options: ExportOptions) -> list[int]:
    """The seeds of a level-2 task's example instances (none for a row without an instance seed)."""
    return [row["instance_seed"] + k for k in range(options.examples)] if "instance_seed" in row else []


def runs_per_verification(row: dict, options: ExportOptions) -> int:
    """How often the verifier runs a level-2 solve.py: once per hidden instance, once on the public example."""
    return len(row["eval_seeds"]) + (1 if _example_seeds(row, options) else 0)


def lookup_program(answers: dict[str, object]) -> str:
    """A solve.py that answers each known instance (by canonical-JSON SHA-256) with a stored solution."""
    return render("lookup_solve.py.template", {"solutions_json": repr(canonical(answers))})


def _write_dockerfile(row: dict, task: Path, options: ExportOptions, copy_lines: list[str]) -> None:
    (task / "environment" / "Dockerfile").write_text(
        render(
            "environment.Dockerfile",
            {
                "task_id": row["id"],
                "base_image": options.base_image,
                "apt_packages": " ".join(AGENT_APT_PACKAGES),
                "solver_venv": SOLVER_VENV,
                "solver_packages": " ".join(_solver_packages(options)),
                "agent_user": AGENT_USER,
                "copy_lines": "\n".join(copy_lines),
            },
        )
    )


def task_config(module, row: dict, options: ExportOptions) -> dict:
    """task.toml of an algorithm task, as data."""
    level = row["level"]
    metadata = {
        "problem": row["problem"],
        "size": row["size"],
        "level": level,
        "objective": module.OBJECTIVE,
        "generator_version": row["generator_version"],
        "allow_ortools": options.allow_ortools,
        "tags": ["operations-research", "optimization", row["problem"], f"level-{level}"],
    }
    if "instance_seed" in row:
        metadata["instance_seed"] = row["instance_seed"]
    if "source" in row:
        metadata["source"] = row["source"]
    if (best_known := best_known_values(row)) is not None:  # report's gap_best; never shown to the agent
        metadata["best_known"] = best_known[0] if level == 1 else best_known  # level 2: one per eval instance
    if level == 1:
        metadata.update(reference=row["reference"], baseline=row["baseline"])
        if (bound := _bound(row.get("reference_meta") or {})) is not None:
            metadata["bound"] = bound
        verifier_timeout_s = 120.0
    else:
        metadata.update(eval_instances=len(row["eval_seeds"]), solve_time_limit_s=row["solve_time_limit_s"])
        longest_run_s = verifier_time_limit_s(float(row["solve_time_limit_s"]), "reference_workload_s" in row)
        verifier_timeout_s = runs_per_verification(row, options) * (longest_run_s + 15.0) + 120.0
    return task_toml(
        row["id"],
        f"{module.TITLE}, size {row['size']}, level {level}",
        metadata,
        options,
        agent_timeout_s=options.agent_timeout_s_for(level),
        verifier_timeout_s=verifier_timeout_s,
        artifacts=[DELIVERABLE[level]],
    )


def _bound(meta: dict) -> float | None:
    """The lower bound the reference solver proved, when its run recorded one."""
    bound = meta.get("bound")
    return bound if isinstance(bound, (int, float)) and not isinstance(bound, bool) else None


def instruction(module, row: dict, options: ExportOptions) -> str:
    """instruction.md: everything the agent is told."""
    level = row["level"]
    example = module.generate(0, module.SIZES[0])
    packages = "numpy and scipy" + (" and ortools" if options.allow_ortools else "")
    formula, meaning = SCORING_TEXT[options.reward_scale]
    kind = contract.KINDS[f"level{level}"]
    fail = f"{to_scale(kind.fail_reward, options.reward_scale, kind.fail_reward):.1f}"
    if level == 1:
        task_section = (
            "Read the instance in `/app/instance.json` and write your best solution to "
            "`/app/solution.json`, in the solution format above. Only that file is scored, as it is "
            "when you finish or when your time is up; it must be a single JSON value of at most "
            "32 MiB. Write a valid solution early and overwrite it as you improve it."
        )
        level_scoring = ""
        fail_text = f"An infeasible solution, or a missing or malformed `/app/solution.json`, scores {fail}."
    else:
        limit_s = row["solve_time_limit_s"]
        task_section = (
            f"Write a program `/app/solve.py`. When you finish, or when your time is up, the "
            f"`/app/solve.py` you have at that moment is run on "
            f"{len(row['eval_seeds'])} hidden instances of size {row['size']}, generated the same way as "
            f"the examples in `/app/examples/`, one run per instance, as\n\n"
            f"    python3 -I solve.py INSTANCE.json SOLUTION.json\n\n"
            f"in a fresh, empty working directory holding only `solve.py` and the instance. It must "
            f"write its solution to the path given as its second argument within **{limit_s:g} seconds** "
            f"of wall-clock time and {options.solve_memory_mb} MB of memory. It runs as an unprivileged "
            f"user with no network, with the Python standard library, {packages} only; "
            f"it can write only in its working directory (also its `TMPDIR`) and `/dev/shm`, at most "
            f"{Limits.disk_mb} MB in {Limits.max_files:,} files in all; "
            f"nothing else you install is visible to it and no other file of yours is copied, so "
            f"`solve.py` must be a single self-contained file. Stop well inside the time limit: a run "
            f"that overruns it scores {fail} for that instance."
            + (
                " Before the hidden instances it is also run once, the same way, on "
                "`/app/examples/example_0.json`; that run does not count toward your reward."
                if _example_seeds(row, options)
                else ""
            )
        )
        level_scoring = "Your reward is the mean of the per-instance rewards."
        fail_text = (
            "On an instance, a run that crashes, overruns its time limit, or writes an infeasible, "
            f"missing or malformed solution scores {fail}; without `/app/solve.py` every instance "
            f"scores {fail}."
        )
    ortools_note = "" if options.allow_ortools else " OR-Tools is not available and may not be used."
    return render(
        "instruction.md",
        {
            "title": f"{module.TITLE} ({row['size']}), level {level}",
            "statement": demote_headings(module.statement().strip()),
            "task_section": task_section,
            "time_scaling_text": time_scaling_text(row),
            "example_instance": json.dumps(example),
            "example_solution": json.dumps(module.baseline(example)),
            "agent_minutes": f"{options.agent_timeout_s_for(level) / 60:g}",
            "time_up_text": time_up_text(f"`{DELIVERABLE[level]}`"),
            "packages_text": packages,
            "ortools_note": ortools_note,
            "network_text": network_text(options),
            "objective": module.OBJECTIVE,
            "reference_time_limit": f"{_reference_time_limit_s(row):g}",
            "reference": module.REFERENCE + ladder_start_text(row),
            "reward_formula": formula,
            "reward_meaning": meaning,
            "level_scoring": level_scoring,
            "fail_text": fail_text,
            "baseline": module.BASELINE.strip(),
        },
    )


def ladder_start_text(row: dict) -> str:
    """How the row's references started, when a strengthened build started them from the class's ladder.

    A level-1 row names its reference's start; a level-2 row says it when any of
    its hidden instances' references started so. Nothing for other rows.
    """
    metas = [row.get("reference_meta") or {}] if row["level"] == 1 else row.get("eval_reference_metas") or []
    if not any("ladder" in meta for meta in metas):
        return ""
    budget_s = next(meta["ladder"].get("budget_s") for meta in metas if "ladder" in meta)
    return (
        f"; the search started from the better of its own start and the answer of a classic constructive rule "
        f"improved by a {budget_s:g}-second local search"
    )


def time_scaling_text(row: dict) -> str:
    """The sentence saying a level-2 time limit is scaled to the machine's speed, on a row that records the
    reference machine's (``reference_workload_s``); nothing otherwise."""
    if row["level"] != 2 or "reference_workload_s" not in row:
        return ""
    return (
        f" The time limit is scaled to the speed of the machine that runs your program (measured by timing a "
        f"fixed Python workload before the runs): a slower machine gives more time and a faster one less, by a "
        f"factor kept between {LOW:g} and {HIGH:g}."
    )


#: The scoring paragraph of an algorithm task's instruction on each reward scale: (formula, what it means).
SCORING_TEXT = {
    "orharbor": (
        "(naive - objective) / (naive - reference)",
        "1.0 matches the reference, above 1.0 beats it, 0.0 is no better than naive, and the\n"
        "reward is clipped below at -1.0.",
    ),
    "unit": (
        "(1 + (naive - objective) / (naive - reference)) / 2",
        "1.0 matches the reference, above 1.0 beats it, 0.5 is no better than naive, and the\n"
        "reward is clipped below at 0.0.",
    ),
    "quality": (
        "min(1, max(best, 1) / max(objective, 1))",
        "where `best` is the best objective known for this instance (hidden from you; never worse\n"
        "than `reference`). Reaching it scores 1.0, the most there is; the reward falls toward 0.0\n"
        "as your objective grows (the naive solution scores best / naive).",
    ),
}


def demote_headings(markdown: str) -> str:
    """Push every heading one level down, so the statement nests under the task title."""
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        lines.append("#" + line if line.startswith("#") and not fenced else line)
    return "\n".join(lines)


def _reference_time_limit_s(row: dict) -> float:
    if row["level"] == 1:
        meta = row.get("reference_meta", {})
    else:
        meta = (row.get("eval_reference_metas") or [{}])[0]
    return float(meta.get("time_limit_s", row.get("reference_time_limit_s", 60.0)))


def _instance(module, row: dict) -> dict:
    return row["instance"] if "instance" in row else module.generate(row["instance_seed"], row["size"])


def _solver_packages(options: ExportOptions) -> list[str]:
    return [*SOLVER_PACKAGES, *([ORTOOLS_PACKAGE] if options.allow_ortools else [])]


def _best_knowns(row: dict, count: int) -> Sequence[float | None]:
    """The best known value of each of the row's ``count`` instances, None for each when the row has none."""
    return best_known_values(row) or [None] * count
