"""Groups of tasks on which a group-scope attack must end the same way: it runs once per group.

A group-scope attack (:attr:`orharbor.check.policies.Policy.scope`) hands in
nothing that depends on the instance (the container attacks, malformed answer
files, hostile solve.py programs), so what it earns is decided by what it can
touch: the images, the verifier and the task's configuration. Tasks whose
exports differ only in their instance data and their name (the shipped level-1
job shop tasks: the same Dockerfiles, test.sh, verifier and task.toml settings)
give it the same reward, so ``orharbor check --attacks`` runs it on one of them
and reports that outcome for each.

:func:`group_key` is a sha256 over a canonical description of everything such
an attack can touch but the instance:

- the task's kind and problem;
- task.toml, parsed, without its ``[task]`` table (the name and description)
  and ``[metadata]`` (what report reads; the verifier reads its copy in task.json);
- tests/task.json, parsed, without its per-instance fields (the task id, the
  instance files and their hashes, the naive and reference objectives, the
  bounds, a spec's expected outputs; the hidden cases by their number alone;
  in its metadata, the instance's seed, size and objectives, and what names
  and describes a modelling spec: its id, difficulty and tags);
- every other file and folder under environment/ and tests/: its path and mode
  (the seal of tests/ is what keeps an agent from reading it), and for a file
  its bytes with the task's own name (the folder's) replaced by a placeholder,
  as it names itself in a Dockerfile's comment: Dockerfiles, test.sh,
  verify.py, the verifier bundle in whatever form it takes.

The files left out by their bytes are the instance data (``instance.json``,
``example.json``, ``eval/*.json``, ``examples/*.json``) and the listings
derived from every file (``manifest.json``, ``agent_files.json``, whose
differences are the instance files' hashes). A modelling task's data files
(``environment/files/``, copied into ``/app`` as a level-1 instance is) are
left out whole, names too: they differ in number and name from spec to spec.
Anything else, a file or a field this module does not know, is described as
it is: what is unknown splits a group, never merges two.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path, PurePosixPath

from orharbor.exporter.task_folder import TaskFolder
from orharbor.verifiers.contract import TASK_FILE, Task

#: task.toml tables that name or describe the task, read by no verifier.
TOML_TABLES_LEFT_OUT = ("task", "metadata")
#: task.json fields that belong to the instance (at the top level, and in ``example``).
INSTANCE_FIELDS = ("task_id", "instance", "instance_sha256", "naive", "reference", "bound", "best_known", "outputs")
#: task.json ``metadata`` fields that belong to the instance, or name and describe a modelling spec.
INSTANCE_METADATA = (
    "instance_seed",
    "reference",
    "baseline",
    "bound",
    "best_known",
    "size",
    "spec",
    "difficulty",
    "tags",
)
#: Files described without their bytes (their paths and modes still count), by folder and name pattern: the
#: instance data, the listings derived from every file, and task.json (described parsed).
BYTES_LEFT_OUT = (
    ("environment", "instance.json"),
    ("environment/examples", "*.json"),
    ("tests", "instance.json"),
    ("tests", "example.json"),
    ("tests/eval", "*.json"),
    ("tests", "manifest.json"),
    ("tests", "agent_files.json"),
    ("tests", TASK_FILE),
)
#: Folders of instance data, left out with everything in them.
INSTANCE_FOLDERS = ("environment/files",)
#: Stands for the task's own name in the files' bytes.
NAME_PLACEHOLDER = b"\x00orharbor-task-name\x00"


def group_key(task_dir: Path | TaskFolder, task: Task) -> str:
    """The group of the task in ``task_dir`` (its contract ``task``): equal for tasks that differ in instance only."""
    folder = TaskFolder.of(task_dir)
    task_dir = folder.path
    description = {
        "kind": task.KIND,
        "problem": getattr(task, "problem", None),
        "task.toml": _without(folder.config, TOML_TABLES_LEFT_OUT),
        "task.json": _contract(json.loads((task_dir / "tests" / TASK_FILE).read_text(encoding="utf-8"))),
        "files": {sub: _tree(task_dir / sub, task_dir.name) for sub in ("environment", "tests")},
    }
    return hashlib.sha256(_canonical(description)).hexdigest()


def _contract(data: object) -> object:
    """task.json's data without what belongs to the instance."""
    if not isinstance(data, dict):
        return data
    shared = _without(data, INSTANCE_FIELDS)
    if isinstance(data.get("cases"), list):
        shared["cases"] = len(data["cases"])
    if isinstance(data.get("example"), dict):
        shared["example"] = _without(data["example"], INSTANCE_FIELDS)
    if isinstance(data.get("metadata"), dict):
        shared["metadata"] = _without(data["metadata"], INSTANCE_METADATA)
    return shared


def _tree(folder: Path, name: str) -> dict[str, list]:
    """Every entry under ``folder`` by its relative path: [mode, what it holds] (a file's digest, a link's target)."""
    entries = {}
    for parent, dirs, files in os.walk(folder, onerror=_unreadable):
        for entry in sorted(dirs) + sorted(files):
            path = Path(parent) / entry
            relative = path.relative_to(folder.parent).as_posix()
            if relative.startswith(tuple(f"{data}/" for data in INSTANCE_FOLDERS)):
                continue
            info = path.lstat()
            held: str | int
            if stat.S_ISLNK(info.st_mode):
                held = f"link to {os.readlink(path)}"
            elif stat.S_ISREG(info.st_mode) and not _bytes_left_out(relative):
                held = _digest(path.read_bytes(), name)
            else:
                held = stat.S_IFMT(info.st_mode)
            entries[relative] = [stat.S_IMODE(info.st_mode), held]
    return entries


def _unreadable(error: OSError) -> None:
    raise error  # a folder left unread would leave out what it holds


def _bytes_left_out(relative: str) -> bool:
    path = PurePosixPath(relative)
    return any(str(path.parent) == folder and path.match(pattern) for folder, pattern in BYTES_LEFT_OUT)


def _digest(data: bytes, name: str) -> str:
    """sha256 of ``data`` with ``name`` as a placeholder (unless the placeholder is there already: then as it is)."""
    if NAME_PLACEHOLDER not in data:
        data = data.replace(name.encode(), NAME_PLACEHOLDER)
    return hashlib.sha256(data).hexdigest()


def _without(data: dict, keys: tuple[str, ...]) -> dict:
    return {key: value for key, value in data.items() if key not in keys}


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr).encode()
