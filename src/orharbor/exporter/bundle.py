"""The standard-library verifier bundle in every task's ``tests/``: one zip file, imported with zipimport.

The bundle mirrors the package layout (``orharbor/verifiers/...`` and
``orharbor/problem_modules/<name>/verify.py``) so the verifier code imports
the same names inside a task as it does in the package, but every
``__init__.py`` in it is empty: nothing outside the standard library loads.

It is one file, ``tests/orharbor.zip`` (:data:`BUNDLE`), not a tree of twenty
because Harbor walks every file of ``tests/`` several times per trial (its
``.harborignore`` filter and input-path checks, and the task checksum of the
trial lock), at a cost that grows with files times depth: 110 ms of CPU per
``Task`` load with the tree, 21 ms with the zip. The zip is stored, not
deflated, with fixed times and modes, so the same sources give the same
bytes on every machine, and verify.py puts it on ``sys.path`` only after the
manifest check. A flat ``tests/`` (``--for tinker``, text files only) gets
the tree (:func:`unpack`).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import orharbor
from orharbor import problem_modules
from orharbor.task_template.verify import BUNDLE

PACKAGE_DIR = Path(orharbor.__file__).resolve().parent
_EMPTY_INIT = '"""orharbor verifier bundle (standard library only)."""\n'
#: Every entry's time: the earliest a zip can hold, so an export's bytes do not depend on when it ran.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def bundle_files(problem: str | None) -> dict[str, bytes]:
    """The bundle as {path under tests/: bytes}: the verifier package and ``problem``'s verify.py (if any)."""
    packages = ["orharbor", "orharbor/verifiers"]
    if problem is not None:
        problem_modules.get(problem)  # validates the name and the class folder
        packages += ["orharbor/problem_modules", f"orharbor/problem_modules/{problem}"]
    files = {f"{package}/__init__.py": _EMPTY_INIT.encode() for package in packages}
    for source in sorted((PACKAGE_DIR / "verifiers").glob("*.py")):
        if source.name != "__init__.py":
            files[f"orharbor/verifiers/{source.name}"] = source.read_bytes()
    if problem is not None:
        files[f"orharbor/problem_modules/{problem}/verify.py"] = Path(
            problem_modules.part(problem, "verify").__file__).read_bytes()
    return dict(sorted(files.items()))


def write_bundle(problem: str | None, tests_dir: Path) -> Path:
    """Write ``tests_dir/orharbor.zip``: :func:`bundle_files`, stored, in a fixed order with fixed times and modes."""
    target = tests_dir / BUNDLE
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in bundle_files(problem).items():
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = 0o100644 << 16
            info.create_system = 3  # Unix, whatever the exporting machine
            archive.writestr(info, data)
    return target


def unpack(tests_dir: Path) -> list[Path]:
    """Replace ``tests_dir/orharbor.zip`` by the tree it holds (nothing if there is none); the files written."""
    archive_path = tests_dir / BUNDLE
    if not archive_path.is_file():
        return []
    written = []
    with zipfile.ZipFile(archive_path) as archive:
        for name in archive.namelist():
            if name.startswith("/") or ".." in name.split("/"):
                raise ValueError(f"{archive_path} names {name!r}, which is not a path inside it")
            target = tests_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(name))
            written.append(target)
    archive_path.unlink()
    return written
