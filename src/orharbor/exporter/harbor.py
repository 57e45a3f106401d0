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
        naive/              the naive baseline's deliverable, as it would sit in /app

Beside the tasks, at the root of the output folder (:func:`write_dataset_index`):
``registry.json`` (the tasks as dataset ``orharbor``, for ``harbor run -d``),
``dataset.toml`` (Harbor's dataset manifest) and a
``.gitattributes`` keeping shell scripts and Dockerfiles LF.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import string
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable

import tomli_w

from orharbor import problem_modules
from orharbor.datasets.build import complete_row
from orharbor.exporter.bundle import write_bundle
from orharbor.files import refuse_existing, replace_dir, staging_dir, write_atomically
from orharbor.jsonio import canonical, digest
from orharbor.verifiers.solver_run import Limits

#: Pinned base image (python 3.12 slim on Debian bookworm, by digest).
BASE_IMAGE = "python:3.12-slim-bookworm@sha256:782412e85d0f0984994c290652577d4018aff08145c85b262bb63dc0c7522254"
SOLVER_VENV = "/opt/orharbor-solver"
SOLVER_PACKAGES = ("numpy==2.2.6", "scipy==1.15.3")
ORTOOLS_PACKAGE = "ortools==9.15.6755"
#: Debian packages Harbor's installed agents check for (claude-code, codex, ...).
AGENT_APT_PACKAGES = ("bash", "ca-certificates", "curl", "git", "nodejs", "npm", "procps", "ripgrep", "xz-utils")
AGENT_USER = "agent"
#: solve.py runs as this uid (Debian's ``nobody``) when scored outside a task container; inside
#: one, every run gets a fresh uid of its own (verifiers/lockdown.py).
SOLVER_UID = 65534
DELIVERABLE = {1: "/app/solution.json", 2: "/app/solve.py"}
#: Shared verifier mode: run by Harbor as root after the agent and before it clears the reward
#: files ([[verifier.collect]]). It ends every process of a non-root user (by owner: a process
#: whose main thread exited looks like a zombie) and clears whatever the agent planted at the
#: reward paths, which Harbor's own ``rm -f`` cannot remove (a folder), so the trial would end
#: with no reward at all instead of the one it earned.
SHARED_CLEANUP = ("for round in 1 2 3; do for p in /proc/[0-9]*; do "
                  "u=$(awk '/^Uid:/ {print $2 + $3 + $4 + $5}' \"$p/status\" 2>/dev/null); "
                  "[ -n \"$u\" ] && [ \"$u\" != 0 ] && kill -9 \"${p#/proc/}\" 2>/dev/null; done; done; "
                  "if [ -L /logs/verifier ] || [ -e /logs/verifier -a ! -d /logs/verifier ]; then rm -f /logs/verifier; fi; "
                  "mkdir -p /logs/verifier && chown root:root /logs/verifier && chmod 755 /logs/verifier; "
                  "rm -rf /logs/verifier/reward.json /logs/verifier/reward.txt; true")
#: The dataset name of every export, in registry.json (``harbor run -d orharbor@VERSION``).
DATASET_NAME = "orharbor"
#: The same dataset in dataset.toml, whose names are org/name.
MANIFEST_DATASET_NAME = "orharbor/orharbor"
#: Written at the root of the output folder: scripts and Dockerfiles run in Linux containers.
GITATTRIBUTES = ("# Written by orharbor export: the tasks' shell scripts and Dockerfiles run in Linux\n"
                 "# containers, so they stay LF on every checkout.\n"
                 "*.sh text eol=lf\n"
                 "Dockerfile text eol=lf\n"
                 "*.Dockerfile text eol=lf\n")


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
        check_base_image(self.base_image)

    def agent_timeout(self, level: int) -> float:
        return self.agent_timeout_s or (1800.0 if level == 1 else 3600.0)


def check_base_image(image: str) -> str:
    """``image`` if it is one printable token; it lands on a Dockerfile's FROM line as is."""
    if not isinstance(image, str) or not image.isprintable() or image.split() != [image]:
        raise ValueError(f"base image must be one image reference, without whitespace or control "
                         f"characters, got {image!r}")
    return image


def export_dataset(rows: Iterable[dict], out: Path, options: ExportOptions = ExportOptions(),
                   progress: Callable[[int], None] | None = None, force: bool = False) -> list[Path]:
    """Export every row under ``out``; return the task directories.

    A task folder of the same id already in ``out`` is an error (checked for
    every row before anything is written) unless ``force``, which replaces it.
    """
    rows = list(rows)
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
        raise ValueError(f"{row['id']}: built with generator version {row['generator_version']}, "
                         f"but {row['problem']} is at version {module.GENERATOR_VERSION}; rebuild the dataset")
    refuse_existing([out / row["id"]], force)
    row = complete_row(dict(row), options.reference_time_limit_s)
    return build_task(out, row["id"], lambda parent: _write_row_task(module, row, parent / row["id"], options),
                      force)


def build_task(out: Path, task_id: str, write: Callable[[Path], Path], force: bool = False) -> Path:
    """Run ``write(parent)``, which writes ``parent/task_id``, in a temporary folder in ``out``; then rename.

    The finished folder replaces ``out/task_id`` only with ``force``
    (:func:`orharbor.files.replace_dir`); a failed write leaves ``out`` as it was.
    Every exporter goes through here: ``export_row``, and ``export_spec`` and
    ``export_retail`` in :mod:`orharbor.exporter.modelling`.
    """
    staging = staging_dir(out, task_id)
    try:
        built = write(staging)
        if built != staging / task_id:
            raise ValueError(f"task {task_id!r} was written to {built.name!r}")
        return replace_dir(built, out / task_id, force)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_row_task(module, row: dict, task: Path, options: ExportOptions) -> Path:
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    level = row["level"]
    metadata = task_config(module, row, options)["metadata"]
    if level == 1:
        _write_level1(module, row, task, options, metadata)
    else:
        _write_level2(module, row, task, options, metadata)
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


def _write_level1(module, row: dict, task: Path, options: ExportOptions, metadata: dict) -> None:
    instance = _instance(module, row)
    text = json.dumps(instance, indent=1) + "\n"
    (task / "environment" / "instance.json").write_text(text)
    (task / "tests" / "instance.json").write_text(text)
    write_json(task / "tests" / "task.json", {
        "task_id": row["id"], "problem": row["problem"], "level": 1, "deliverable": DELIVERABLE[1],
        "instance": "instance.json", "instance_sha256": digest(instance),
        "naive": row["baseline"], "reference": row["reference"], "metadata": metadata})
    write_json(task / "solution" / "solution.json", row["reference_solution"])
    (task / "solution" / "naive").mkdir()
    write_json(task / "solution" / "naive" / "solution.json", row["baseline_solution"])
    copy_template("solve_level1.sh", task / "solution" / "solve.sh", executable=True)
    _write_dockerfile(row, task, options, ["COPY instance.json /app/instance.json"])


def _write_level2(module, row: dict, task: Path, options: ExportOptions, metadata: dict) -> None:
    (task / "tests" / "eval").mkdir()
    cases, answers, naive = [], {}, {}
    for i, seed in enumerate(row["eval_seeds"]):
        instance = module.generate(seed, row["size"])
        name = f"eval/eval_{i:03d}.json"
        (task / "tests" / name).write_text(json.dumps(instance) + "\n")
        cases.append({"instance": name, "instance_sha256": digest(instance),
                      "naive": row["eval_baselines"][i], "reference": row["eval_references"][i],
                      "bound": _bound((row.get("eval_reference_metas") or [{}] * (i + 1))[i])})
        answers[digest(instance)] = row["eval_reference_solutions"][i]
        naive[digest(instance)] = row["eval_baseline_solutions"][i]
    limits = {"wall_s": float(row["solve_time_limit_s"]), "memory_mb": options.solve_memory_mb,
              "disk_mb": Limits.disk_mb, "max_files": Limits.max_files}
    write_json(task / "tests" / "task.json", {
        "task_id": row["id"], "problem": row["problem"], "level": 2, "deliverable": DELIVERABLE[2],
        "eval": cases, "limits": limits, "solver_python": f"{SOLVER_VENV}/bin/python3",
        "solver_uid": SOLVER_UID, "metadata": metadata})
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


def write_dataset_index(out: Path) -> list[Path]:
    """Write the files that sit beside the tasks in ``out``; return those written.

    They describe every task folder in ``out`` (any folder with a task.toml),
    including tasks an earlier export left there, not only the new ones. Each is
    written to a temporary file and renamed; a user's file that is not one
    orharbor can extend is refused (:func:`check_dataset_index`), never replaced.
    """
    check_dataset_index(out)
    tasks = sorted(path.parent for path in out.glob("*/task.toml"))
    written = [write_registry(out, tasks), write_dataset_manifest(out, tasks)]
    gitattributes = write_gitattributes(out)
    return written + [gitattributes] if gitattributes else written


def check_dataset_index(out: Path) -> None:
    """ValueError if ``out`` holds a registry.json or dataset.toml that export would have to replace.

    Called before anything is exported, so a refused export writes nothing.
    """
    from harbor.models.dataset.manifest import DatasetManifest

    registry, manifest = out / "registry.json", out / "dataset.toml"
    if registry.exists():
        try:
            _registry_datasets(registry)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{registry} is not a registry.json export can add its dataset to ({exc}); "
                             "move it away, or export to another folder") from None
    if manifest.exists():
        try:
            DatasetManifest.from_toml_file(manifest)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{manifest} is not a Harbor dataset manifest export can update "
                             f"({str(exc).splitlines()[0]}); move it away, or export to another folder") from None


def package_version() -> str:
    """orharbor's installed version: the dataset's version in registry.json and dataset.toml."""
    return importlib.metadata.version("orharbor")


def write_registry(out: Path, tasks: list[Path]) -> Path:
    """registry.json: dataset ``orharbor`` at this version, for ``harbor run -d orharbor@VERSION --registry-path``.

    Task paths are absolute: Harbor's JSON registry client resolves a relative
    path against the working directory of ``harbor run``, not against the
    registry file. Other datasets already listed in the file are kept.
    """
    path = out / "registry.json"
    dataset = {"name": DATASET_NAME, "version": package_version(),
               "description": "orharbor: operations-research tasks with verifiable rewards",
               "tasks": [{"name": task.name, "path": str(task.resolve())} for task in tasks], "metrics": []}
    datasets = [*(d for d in _registry_datasets(path) if d.get("name") != DATASET_NAME), dataset]
    write_atomically(path, json.dumps(datasets, indent=1) + "\n")
    return path


def _registry_datasets(path: Path) -> list[dict]:
    """The datasets of an existing registry.json (none if there is none); ValueError if it is not one."""
    if not path.exists():
        return []
    datasets = json.loads(path.read_text())
    if not isinstance(datasets, list) or not all(isinstance(d, dict) for d in datasets):
        raise ValueError("expected a JSON list of datasets")
    return datasets


def write_dataset_manifest(out: Path, tasks: list[Path]) -> Path:
    """dataset.toml as ``harbor dataset init`` writes it offline.

    The task digests come from Harbor's own packager, so they are the ones
    ``harbor publish`` would compute. An existing manifest keeps its other fields.
    """
    from harbor.models.dataset.manifest import DatasetInfo, DatasetManifest, DatasetTaskRef
    from harbor.publisher.packager import Packager

    path = out / "dataset.toml"
    manifest = (DatasetManifest.from_toml_file(path) if path.exists() else DatasetManifest(dataset=DatasetInfo(
        name=MANIFEST_DATASET_NAME, description="orharbor: operations-research tasks with verifiable rewards")))
    manifest.dataset.version = package_version()
    manifest.tasks = [DatasetTaskRef(name=name, digest=f"sha256:{Packager.compute_content_hash(task)[0]}")
                      for task in tasks if (name := _task_name(task))]
    write_atomically(path, manifest.to_toml())
    return path


def _task_name(task: Path) -> str | None:
    """The org/name of task.toml's [task] table (None without one, or for a task.toml that does not parse)."""
    try:
        return tomllib.loads((task / "task.toml").read_text()).get("task", {}).get("name")
    except (OSError, ValueError, AttributeError):
        return None


def write_gitattributes(out: Path) -> Path | None:
    """``out/.gitattributes`` keeping test.sh, solve.sh and Dockerfiles LF; None if another one is there."""
    path = out / ".gitattributes"
    if path.exists() and path.read_text() != GITATTRIBUTES:
        return None
    write_atomically(path, GITATTRIBUTES)
    return path


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
    """task.toml of an algorithm task, as data."""
    level = row["level"]
    metadata = {"problem": row["problem"], "size": row["size"], "level": level,
                "objective": module.OBJECTIVE, "generator_version": row["generator_version"],
                "allow_ortools": options.allow_ortools,
                "tags": ["operations-research", "optimization", row["problem"], f"level-{level}"]}
    if "instance_seed" in row:
        metadata["instance_seed"] = row["instance_seed"]
    if "source" in row:
        metadata["source"] = row["source"]
    if level == 1:
        metadata.update(reference=row["reference"], baseline=row["baseline"])
        if (bound := _bound(row.get("reference_meta") or {})) is not None:
            metadata["bound"] = bound
        verifier_timeout = 120.0
    else:
        metadata.update(eval_instances=len(row["eval_seeds"]), solve_time_limit_s=row["solve_time_limit_s"])
        verifier_timeout = len(row["eval_seeds"]) * (float(row["solve_time_limit_s"]) + 15.0) + 120.0
    return task_toml(row["id"], f"{module.TITLE}, size {row['size']}, level {level}", metadata, options,
                     agent_timeout=options.agent_timeout(level), verifier_timeout=verifier_timeout,
                     artifacts=[DELIVERABLE[level]])


def _bound(meta: dict) -> float | None:
    """The lower bound the reference solver proved, when its run recorded one."""
    bound = meta.get("bound")
    return bound if isinstance(bound, (int, float)) and not isinstance(bound, bool) else None


def task_toml(task_id: str, description: str, metadata: dict, options: ExportOptions, *,
              agent_timeout: float, verifier_timeout: float, artifacts: list[str]) -> dict:
    """task.toml as data, in the shape of Harbor's TaskConfig: the one builder for every task kind.

    A separate verifier gets its own ``[verifier.environment]``, offline from the
    start, so no provider has to switch its network after start. A shared
    verifier gets a collect hook (:data:`SHARED_CLEANUP`) that Harbor runs as root
    between the agent and the verifier. An allowlist
    applies to the agent phase only (``[agent]``): ``[environment]`` stays public
    because agent setup installs claude-code or codex from the network.
    """
    resources = {"build_timeout_sec": 1800.0, "cpus": options.cpus, "memory_mb": options.memory_mb,
                 "storage_mb": options.storage_mb}
    verifier: dict = {"timeout_sec": verifier_timeout, "environment_mode": options.verifier_mode}
    if options.verifier_mode == "separate":
        verifier["environment"] = {**resources, "network_mode": "no-network"}
    else:
        verifier["collect"] = [{"command": SHARED_CLEANUP, "user": "root", "timeout_sec": 60.0}]
    agent: dict = {"timeout_sec": agent_timeout, "user": AGENT_USER}
    if options.agent_network == "allowlist":
        agent.update(network_mode="allowlist", allowed_hosts=list(options.allowed_hosts))
    return {
        "schema_version": "1.4",
        "task": {"name": f"orharbor/{task_id}", "description": description, "keywords": metadata["tags"]},
        "metadata": {**metadata, "verifier_mode": options.verifier_mode},
        "verifier": verifier,
        "agent": agent,
        "environment": {**resources, "network_mode": "public"},
        "artifacts": artifacts,
    }


def instruction(module, row: dict, options: ExportOptions) -> str:
    """instruction.md: everything the agent is told."""
    level = row["level"]
    example = module.generate(0, module.SIZES[0])
    packages = "numpy and scipy" + (" and ortools" if options.allow_ortools else "")
    if level == 1:
        task_section = (
            "Read the instance in `/app/instance.json` and write your best solution to "
            "`/app/solution.json`, in the solution format above. Only that file is scored, as it is "
            "when you finish or when your time is up; it must be a single JSON value of at most "
            "32 MiB. Write a valid solution early and overwrite it as you improve it.")
        level_scoring = ""
        fail_text = "An infeasible solution, or a missing or malformed `/app/solution.json`, scores -1.0."
    else:
        limit = row["solve_time_limit_s"]
        task_section = (
            f"Write a program `/app/solve.py`. When you finish, or when your time is up, the "
            f"`/app/solve.py` you have at that moment is run on "
            f"{len(row['eval_seeds'])} hidden instances of size {row['size']}, generated the same way as "
            f"the examples in `/app/examples/`, one run per instance, as\n\n"
            f"    python3 -I solve.py INSTANCE.json SOLUTION.json\n\n"
            f"in a fresh, empty working directory holding only `solve.py` and the instance. It must "
            f"write its solution to the path given as its second argument within **{limit:g} seconds** "
            f"of wall-clock time and {options.solve_memory_mb} MB of memory. It runs as an unprivileged "
            f"user with no network, with the Python standard library, {packages} only; "
            f"it can write only in its working directory (also its `TMPDIR`) and `/dev/shm`, at most "
            f"{Limits.disk_mb} MB in {Limits.max_files:,} files in all; "
            f"nothing else you install is visible to it and no other file of yours is copied, so "
            f"`solve.py` must be a single self-contained file. Stop well inside the time limit: a run "
            f"that overruns it scores -1.0 for that instance.")
        level_scoring = "Your reward is the mean of the per-instance rewards."
        fail_text = ("On an instance, a run that crashes, overruns its time limit, or writes an infeasible, "
                     "missing or malformed solution scores -1.0; without `/app/solve.py` every instance "
                     "scores -1.0.")
    ortools_note = ("" if options.allow_ortools else
                    " OR-Tools is not available and may not be used.")
    return render("instruction.md", {
        "title": f"{module.TITLE} ({row['size']}), level {level}",
        "statement": demote_headings(module.statement().strip()),
        "task_section": task_section,
        "example_instance": json.dumps(example),
        "example_solution": json.dumps(module.baseline(example)),
        "agent_minutes": f"{options.agent_timeout(level) / 60:g}",
        "time_up_text": time_up_text(f"`{DELIVERABLE[level]}`"),
        "packages_text": packages,
        "ortools_note": ortools_note,
        "network_text": network_text(options),
        "objective": module.OBJECTIVE,
        "reference_time_limit": f"{_reference_time_limit(row):g}",
        "level_scoring": level_scoring,
        "fail_text": fail_text,
        "baseline": module.BASELINE.strip(),
    })


def network_text(options: ExportOptions) -> str:
    """What the instruction says of the network during the agent phase."""
    if options.agent_network == "public":
        return "The network is open (your model API needs it)."
    return "The network is limited to an allowlist (your model API); package installs will fail."


def time_up_text(what: str) -> str:
    """What happens when the agent's time runs out: Harbor still verifies the deliverable it finds then."""
    return (f"When the time is up you are stopped, and the state of {what} at that moment is scored "
            "as if you had finished; running out of time costs nothing by itself.")


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
    """tests/test.sh; if Python itself fails it still leaves the failure reward, and says why in details.json."""
    kind = "modelling" if modelling else "algorithm"
    reward = 0.0 if modelling else -1.0
    details = {"kind": kind, "error": "verifier failed (test.sh fallback)", "reward": reward,
               **({"executed": 0, "correct": 0} if modelling else {"feasible": 0})}
    (tests / "test.sh").write_text(render("test.sh", {"fail_reward": f"{reward:.1f}",
                                                     "fail_json": json.dumps({"reward": reward}),
                                                     "fail_details": json.dumps(details)}))
    (tests / "test.sh").chmod(0o755)


def write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=1) + "\n")
