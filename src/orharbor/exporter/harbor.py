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
        verify.py           entry of the standard-library verifier bundle (orharbor/...)
        task.json           problem, level, naive and reference values, limits
        instance.json | eval/*.json
        Dockerfile          separate verifier mode: the verifier image, tests baked in
      solution/
        solve.sh            the oracle (solution.json or a lookup solve.py beside it)
        naive/              the naive baseline's deliverable, for ``orharbor check``
"""

from __future__ import annotations

import json
import shutil
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable

import tomli_w

from orharbor import problem_modules
from orharbor.datasets.build import complete_row
from orharbor.exporter.bundle import write_bundle
from orharbor.jsonio import canonical, digest

#: Pinned base image (python 3.12 slim on Debian bookworm, by digest).
BASE_IMAGE = "python:3.12-slim-bookworm@sha256:782412e85d0f0984994c290652577d4018aff08145c85b262bb63dc0c7522254"
SOLVER_VENV = "/opt/orharbor-solver"
SOLVER_PACKAGES = ("numpy==2.2.6", "scipy==1.15.3")
ORTOOLS_PACKAGE = "ortools==9.15.6755"
#: Debian packages Harbor's installed agents check for (claude-code, codex, ...).
AGENT_APT_PACKAGES = ("bash", "ca-certificates", "curl", "git", "nodejs", "npm", "procps", "ripgrep", "xz-utils")
AGENT_USER = "agent"
#: solve.py runs as this uid (Debian's ``nobody``) inside the verifier.
SOLVER_UID = 65534
DELIVERABLE = {1: "/app/solution.json", 2: "/app/solve.py"}


@dataclass(frozen=True)
class ExportOptions:
    """How rows become tasks; every field is a CLI flag of ``orharbor export``."""

    verifier_mode: str = "separate"
    allow_ortools: bool = False
    agent_network: str = "public"
    allowed_hosts: tuple[str, ...] = ()
    agent_timeout_s: float | None = None
    cpus: int = 2
    memory_mb: int = 4096
    storage_mb: int = 10240
    solve_memory_mb: int = 2048
    examples: int = 2
    base_image: str = BASE_IMAGE
    reference_time_limit_s: float = 60.0

    def __post_init__(self) -> None:
        if self.verifier_mode not in ("separate", "shared"):
            raise ValueError(f"verifier mode must be 'separate' or 'shared', got {self.verifier_mode!r}")
        if self.agent_network not in ("public", "allowlist"):
            raise ValueError(f"agent network must be 'public' or 'allowlist', got {self.agent_network!r}")
        if self.agent_network == "allowlist" and not self.allowed_hosts:
            raise ValueError("--agent-network allowlist needs at least one --allowed-hosts entry (the model API)")

    def agent_timeout(self, level: int) -> float:
        return self.agent_timeout_s or (1800.0 if level == 1 else 3600.0)


def export_dataset(rows: Iterable[dict], out: Path, options: ExportOptions = ExportOptions(),
                   progress: Callable[[int], None] | None = None) -> list[Path]:
    """Export every row under ``out``; return the task directories."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for row in rows:
        paths.append(export_row(row, out, options))
        if progress:
            progress(1)
    return paths


def export_row(row: dict, out: Path, options: ExportOptions = ExportOptions()) -> Path:
    """Write the task directory of one validated row; return its path."""
    module = problem_modules.get(row["problem"])
    if "instance" not in row and row["generator_version"] != module.GENERATOR_VERSION:
        raise ValueError(f"{row['id']}: built with generator version {row['generator_version']}, "
                         f"but {row['problem']} is at version {module.GENERATOR_VERSION}; rebuild the dataset")
    row = complete_row(dict(row), options.reference_time_limit_s)
    task = out / row["id"]
    if task.exists():
        shutil.rmtree(task)
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    level = row["level"]
    if level == 1:
        _write_level1(module, row, task, options)
    else:
        _write_level2(module, row, task, options)
    write_bundle(row["problem"], task / "tests")
    copy_template("verify.py", task / "tests" / "verify.py")
    write_test_sh(task / "tests", modelling=False)
    if options.verifier_mode == "separate":
        (task / "tests" / "Dockerfile").write_text(render("verifier.Dockerfile", {
            "task_id": row["id"], "base_image": options.base_image, "solver_venv": SOLVER_VENV,
            "solver_packages": " ".join(_solver_packages(options))}))
    (task / "task.toml").write_text(tomli_w.dumps(task_config(module, row, options)))
    (task / "instruction.md").write_text(instruction(module, row, options))
    seal(task / "tests")
    return task


def _write_level1(module, row: dict, task: Path, options: ExportOptions) -> None:
    instance = _instance(module, row)
    text = json.dumps(instance, indent=1) + "\n"
    (task / "environment" / "instance.json").write_text(text)
    (task / "tests" / "instance.json").write_text(text)
    write_json(task / "tests" / "task.json", {
        "task_id": row["id"], "problem": row["problem"], "level": 1, "deliverable": DELIVERABLE[1],
        "instance": "instance.json", "instance_sha256": digest(instance),
        "naive": row["baseline"], "reference": row["reference"]})
    write_json(task / "solution" / "solution.json", row["reference_solution"])
    (task / "solution" / "naive").mkdir()
    write_json(task / "solution" / "naive" / "solution.json", row["baseline_solution"])
    copy_template("solve_level1.sh", task / "solution" / "solve.sh", executable=True)
    _write_dockerfile(row, task, options, ["COPY instance.json /app/instance.json"])


def _write_level2(module, row: dict, task: Path, options: ExportOptions) -> None:
    (task / "tests" / "eval").mkdir()
    cases, answers, naive = [], {}, {}
    for i, seed in enumerate(row["eval_seeds"]):
        instance = module.generate(seed, row["size"])
        name = f"eval/eval_{i:03d}.json"
        (task / "tests" / name).write_text(json.dumps(instance) + "\n")
        cases.append({"instance": name, "instance_sha256": digest(instance),
                      "naive": row["eval_baselines"][i], "reference": row["eval_references"][i]})
        answers[digest(instance)] = row["eval_reference_solutions"][i]
        naive[digest(instance)] = row["eval_baseline_solutions"][i]
    limits = {"wall_s": float(row["solve_time_limit_s"]), "memory_mb": options.solve_memory_mb}
    write_json(task / "tests" / "task.json", {
        "task_id": row["id"], "problem": row["problem"], "level": 2, "deliverable": DELIVERABLE[2],
        "eval": cases, "limits": limits, "solver_python": f"{SOLVER_VENV}/bin/python3",
        "solver_uid": SOLVER_UID})
    (task / "solution" / "solve.py").write_text(lookup_program(answers))
    (task / "solution" / "naive").mkdir()
    (task / "solution" / "naive" / "solve.py").write_text(lookup_program(naive))
    copy_template("solve_level2.sh", task / "solution" / "solve.sh", executable=True)
    examples = task / "environment" / "examples"
    examples.mkdir()
    seeds = [row["instance_seed"] + k for k in range(options.examples)] if "instance_seed" in row else []
    for k, seed in enumerate(seeds):
        (examples / f"example_{k}.json").write_text(json.dumps(module.generate(seed, row["size"]), indent=1) + "\n")
    _write_dockerfile(row, task, options, ["COPY examples/ /app/examples/"])


def lookup_program(answers: dict[str, object]) -> str:
    """A solve.py that answers each known instance (by canonical-JSON SHA-256) with a stored solution."""
    return render("lookup_solve.py", {"solutions_json": repr(canonical(answers))})


def _write_dockerfile(row: dict, task: Path, options: ExportOptions, copy_lines: list[str]) -> None:
    (task / "environment" / "Dockerfile").write_text(render("environment.Dockerfile", {
        "task_id": row["id"], "base_image": options.base_image,
        "apt_packages": " ".join(AGENT_APT_PACKAGES), "solver_venv": SOLVER_VENV,
        "solver_packages": " ".join(_solver_packages(options)), "agent_user": AGENT_USER,
        "copy_lines": "\n".join(copy_lines)}))


def task_config(module, row: dict, options: ExportOptions) -> dict:
    """task.toml as data, in the shape of Harbor's TaskConfig."""
    level = row["level"]
    metadata = {"problem": row["problem"], "size": row["size"], "level": level,
                "objective": module.OBJECTIVE, "generator_version": row["generator_version"],
                "allow_ortools": options.allow_ortools, "verifier_mode": options.verifier_mode,
                "tags": ["operations-research", "optimization", row["problem"], f"level-{level}"]}
    if "instance_seed" in row:
        metadata["instance_seed"] = row["instance_seed"]
    if "source" in row:
        metadata["source"] = row["source"]
    if level == 1:
        metadata.update(reference=row["reference"], baseline=row["baseline"])
        verifier_timeout = 120.0
    else:
        metadata.update(eval_instances=len(row["eval_seeds"]), solve_time_limit_s=row["solve_time_limit_s"])
        verifier_timeout = len(row["eval_seeds"]) * (float(row["solve_time_limit_s"]) + 15.0) + 120.0
    environment = {"build_timeout_sec": 1800.0, "cpus": options.cpus, "memory_mb": options.memory_mb,
                   "storage_mb": options.storage_mb, "network_mode": options.agent_network}
    if options.agent_network == "allowlist":
        environment["allowed_hosts"] = list(options.allowed_hosts)
    verifier = {"timeout_sec": verifier_timeout, "environment_mode": options.verifier_mode}
    if options.verifier_mode == "separate":
        verifier["network_mode"] = "no-network"
    return {
        "schema_version": "1.4",
        "task": {"name": f"orharbor/{row['id']}",
                 "description": f"{module.TITLE}, size {row['size']}, level {level}",
                 "keywords": metadata["tags"]},
        "metadata": metadata,
        "verifier": verifier,
        "agent": {"timeout_sec": options.agent_timeout(level), "user": AGENT_USER},
        "environment": environment,
        "artifacts": [DELIVERABLE[level]],
    }


def instruction(module, row: dict, options: ExportOptions) -> str:
    """instruction.md: everything the agent is told."""
    level = row["level"]
    example = module.generate(0, module.SIZES[0])
    packages = "numpy and scipy" + (" and ortools" if options.allow_ortools else "")
    if level == 1:
        task_section = (
            "Read the instance in `/app/instance.json` and write your best solution to "
            "`/app/solution.json`, in the solution format above. Only that file is scored, "
            "once you have finished; it must be a single JSON value of at most 32 MiB.")
        level_scoring = ""
    else:
        limit = row["solve_time_limit_s"]
        task_section = (
            f"Write a program `/app/solve.py`. After you finish it is run on "
            f"{len(row['eval_seeds'])} hidden instances of size {row['size']}, generated the same way as "
            f"the examples in `/app/examples/`, one run per instance, as\n\n"
            f"    python3 -I solve.py INSTANCE.json SOLUTION.json\n\n"
            f"in a fresh, empty working directory holding only `solve.py` and the instance. It must "
            f"write its solution to the path given as its second argument within **{limit:g} seconds** "
            f"of wall-clock time and {options.solve_memory_mb} MB of memory. It runs as an unprivileged "
            f"user with no network, with the Python standard library, {packages} only; "
            f"nothing else you install is visible to it and no other file of yours is copied, so "
            f"`solve.py` must be a single self-contained file. Stop well inside the time limit: a run "
            f"that overruns it scores -1.0 for that instance.")
        level_scoring = "Your reward is the mean of the per-instance rewards."
    ortools_note = ("" if options.allow_ortools else
                    " OR-Tools is not available and may not be used.")
    network_text = ("The network is open (your model API needs it)." if options.agent_network == "public"
                    else "The network is limited to an allowlist (your model API); package "
                         "installs will fail.")
    return render("instruction.md", {
        "title": f"{module.TITLE} ({row['size']}), level {level}",
        "statement": demote_headings(module.statement().strip()),
        "task_section": task_section,
        "example_instance": json.dumps(example),
        "example_solution": json.dumps(module.baseline(example)),
        "agent_minutes": f"{options.agent_timeout(level) / 60:g}",
        "packages_text": packages,
        "ortools_note": ortools_note,
        "network_text": network_text,
        "objective": module.OBJECTIVE,
        "reference_time_limit": f"{_reference_time_limit(row):g}",
        "level_scoring": level_scoring,
        "baseline": module.BASELINE.strip(),
    })


def demote_headings(markdown: str) -> str:
    """Push every heading one level down, so the statement nests under the task title."""
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        lines.append("#" + line if line.startswith("#") and not fenced else line)
    return "\n".join(lines)


def _reference_time_limit(row: dict) -> float:
    if row["level"] == 1:
        meta = row.get("reference_meta", {})
    else:
        meta = (row.get("eval_reference_metas") or [{}])[0]
    return float(meta.get("time_limit_s", row.get("reference_time_limit_s", 60.0)))


def _instance(module, row: dict) -> dict:
    return row["instance"] if "instance" in row else module.generate(row["instance_seed"], row["size"])


def _solver_packages(options: ExportOptions) -> list[str]:
    return [*SOLVER_PACKAGES, *([ORTOOLS_PACKAGE] if options.allow_ortools else [])]


def template_text(name: str) -> str:
    return resources.files("orharbor.task_template").joinpath(name).read_text()


def render(name: str, values: dict) -> str:
    return string.Template(template_text(name)).substitute(values)


def copy_template(name: str, target: Path, executable: bool = False) -> None:
    target.write_text(template_text(name))
    if executable:
        target.chmod(0o755)


def seal(tests: Path) -> None:
    """Make tests/ readable by its owner only.

    Uploads keep these modes and land owned by root, so in shared mode a process
    the agent left behind cannot read the expected values or hidden instances in
    the moment between the upload and test.sh's own ``chmod``.
    """
    for path in (tests, *tests.rglob("*")):
        path.chmod(0o700 if path.is_dir() or path.name == "test.sh" else 0o600)


def write_test_sh(tests: Path, modelling: bool) -> None:
    """tests/test.sh; if Python itself fails it still leaves the failure reward behind."""
    fail = {"reward": 0.0, "executed": 0, "correct": 0} if modelling else {"reward": -1.0, "feasible": 0}
    (tests / "test.sh").write_text(render("test.sh", {"fail_reward": f"{fail['reward']:.1f}",
                                                     "fail_json": json.dumps(fail)}))
    (tests / "test.sh").chmod(0o755)


def write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=1) + "\n")
