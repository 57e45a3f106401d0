"""The files beside the tasks in an export folder: registry.json, dataset.toml, .gitattributes."""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from orharbor.errors import UserError
from orharbor.exporter.task_folder import TaskFolder
from orharbor.files import write_atomically
from orharbor.task_toml import TaskTomlError

#: The dataset name of every export, in registry.json (``harbor run -d orharbor@VERSION``).
DATASET_NAME = "orharbor"
#: The same dataset in dataset.toml, whose names are org/name.
MANIFEST_DATASET_NAME = "orharbor/orharbor"
#: What the dataset of an export is called unless a release names it: (name, version, description).
DESCRIPTION = "orharbor: operations-research tasks with verifiable rewards"

#: Written at the root of the output folder: scripts and Dockerfiles run in Linux containers.
GITATTRIBUTES = (
    "# Written by orharbor export: the tasks' shell scripts and Dockerfiles run in Linux\n"
    "# containers, so they stay LF on every checkout.\n"
    "*.sh text eol=lf\n"
    "Dockerfile text eol=lf\n"
    "*.Dockerfile text eol=lf\n"
)


class DatasetIndexError(UserError):
    """A registry.json or dataset.toml in the export folder that export cannot extend (so would replace)."""


@dataclass(frozen=True)
class GitSource:
    """Where the export folder will live in git: Harbor's ``download --export`` copies only tasks given this way.

    Harbor's registry client hands back a task given by ``path`` alone where it
    already is (``LocalTaskId``), so ``harbor download --export`` (which Prime's
    ``verifiers`` uses) copies nothing from a path registry; a task given by
    ``git_url`` (and ``git_commit_id``, the branch head when None) plus its
    ``path`` in that repository is cloned and copied.
    """

    url: str
    path: str = "."  #: the export folder inside the repository
    commit: str | None = None

    def task(self, name: str) -> dict:
        entry = {"name": name, "git_url": self.url, "path": str(PurePosixPath(self.path, name))}
        return entry | ({"git_commit_id": self.commit} if self.commit else {})


def write_dataset_index(
    out: Path,
    name: str = DATASET_NAME,
    version: str | None = None,
    description: str = DESCRIPTION,
    git: GitSource | None = None,
) -> list[Path]:
    """Write the files that sit beside the tasks in ``out``; return those written.

    The dataset is ``name@version`` (default ``orharbor`` at the package's
    version; a benchmark release passes its own, e.g. ``orharbor-bench@1.0``).

    They describe every task folder in ``out`` (any folder with a task.toml),
    including tasks an earlier export left there, not only the new ones. Each is
    written to a temporary file and renamed; a user's file that is not one
    orharbor can extend is refused (:func:`check_dataset_index`), never replaced.
    """
    check_dataset_index(out)
    tasks = sorted(path.parent for path in out.glob("*/task.toml"))
    version = version or package_version()
    written = [
        write_registry(out, tasks, name, version, description, git),
        write_dataset_manifest(out, tasks, f"orharbor/{name}", version, description),
    ]
    gitattributes = write_gitattributes(out)
    return written + [gitattributes] if gitattributes else written


def check_dataset_index(out: Path) -> None:
    """DatasetIndexError if ``out`` holds a registry.json or dataset.toml that export would have to replace.

    Called before anything is exported, so a refused export writes nothing.
    """
    from harbor.models.dataset.manifest import DatasetManifest

    registry, manifest = out / "registry.json", out / "dataset.toml"
    if registry.exists():
        try:
            _registry_datasets(registry)
        except (OSError, ValueError) as exc:
            raise DatasetIndexError(
                f"{registry} is not a registry.json export can add its dataset to ({exc}); "
                "move it away, or export to another folder"
            ) from None
    if manifest.exists():
        try:
            DatasetManifest.from_toml_file(manifest)
        except (OSError, ValueError) as exc:
            raise DatasetIndexError(
                f"{manifest} is not a Harbor dataset manifest export can update "
                f"({str(exc).splitlines()[0]}); move it away, or export to another folder"
            ) from None


def package_version() -> str:
    """orharbor's installed version: the dataset's version in registry.json and dataset.toml."""
    return importlib.metadata.version("orharbor")


def write_registry(
    out: Path,
    tasks: list[Path],
    name: str = DATASET_NAME,
    version: str | None = None,
    description: str = DESCRIPTION,
    git: GitSource | None = None,
) -> Path:
    """registry.json: the dataset ``name@version``, for ``harbor run -d NAME@VERSION --registry-path``.

    Task paths are absolute: Harbor's JSON registry client resolves a relative
    path against the working directory of ``harbor run``, not against the
    registry file. Other datasets already listed in the file are kept. With
    ``git``, each task is given by its git coordinates instead (:class:`GitSource`).
    """
    path = out / "registry.json"
    dataset = {
        "name": name,
        "version": version or package_version(),
        "description": description,
        "tasks": [git.task(task.name) if git else {"name": task.name, "path": str(task.resolve())} for task in tasks],
        "metrics": [],
    }
    datasets = [*(d for d in _registry_datasets(path) if d.get("name") != name), dataset]
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


def write_dataset_manifest(
    out: Path,
    tasks: list[Path],
    name: str = MANIFEST_DATASET_NAME,
    version: str | None = None,
    description: str = DESCRIPTION,
) -> Path:
    """dataset.toml as ``harbor dataset init`` writes it offline.

    The task digests come from Harbor's own packager, so they are the ones
    ``harbor publish`` would compute. An existing manifest keeps its other fields.
    """
    from harbor.models.dataset.manifest import DatasetInfo, DatasetManifest, DatasetTaskRef
    from harbor.publisher.packager import Packager

    path = out / "dataset.toml"
    manifest = (
        DatasetManifest.from_toml_file(path)
        if path.exists()
        else DatasetManifest(dataset=DatasetInfo(name=name, description=description))
    )
    manifest.dataset.name = name
    manifest.dataset.version = version or package_version()
    manifest.tasks = [
        DatasetTaskRef(name=task_name, digest=f"sha256:{Packager.compute_content_hash(task)[0]}")
        for task in tasks
        if (task_name := _task_name(task))
    ]
    write_atomically(path, manifest.to_toml())
    return path


def _task_name(task: Path) -> str | None:
    """The org/name of task.toml's [task] table (None without one, or for a task.toml that does not parse)."""
    try:
        return TaskFolder(task).name
    except TaskTomlError:
        return None


def write_gitattributes(out: Path) -> Path | None:
    """``out/.gitattributes`` keeping test.sh, solve.sh and Dockerfiles LF; None if another one is there."""
    path = out / ".gitattributes"
    if path.exists() and path.read_text() != GITATTRIBUTES:
        return None
    write_atomically(path, GITATTRIBUTES)
    return path
