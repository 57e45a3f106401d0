"""The standard-library verifier bundle in every task's ``tests/``: one zip file, imported with zipimport.

The bundle mirrors the package layout (``orharbor/verifiers/...`` and
``orharbor/problem_modules/<name>/verify.py``) so the verifier code imports
the same names inside a task as it does in the package, but every
``__init__.py`` in it is empty: nothing outside the standard library loads.

It is one file, ``tests/orharbor.zip`` (:data:`BUNDLE`), not a tree of twenty
because Harbor walks every file of ``tests/`` several times per trial (its
``.harborignore`` filter and input-path checks, and the task checksum of the
trial lock), at a cost that grows with files times depth: 110 ms of CPU per
``Task`` load with the tree, 21 ms with the zip. Beside each module it holds
its bytecode, compiled at export by a fresh interpreter of the exporting Python
as a checked hash-based ``.pyc``: zipimport loads it only when its magic number
is the verifying Python's (else it compiles the source, as before) and its
source hash matches the module beside it. Compiling the bundle took about 250 ms
of CPU at every verify. The zip is stored, not deflated, with fixed times and
modes, so the same sources and the same Python give the same bytes, and
verify.py puts it on ``sys.path`` only after the manifest check. A flat
``tests/`` (``--for tinker``, text files only) gets the tree of sources
(:func:`unpack`).
"""

from __future__ import annotations

import base64
import io
import functools
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from orharbor import problem_modules
from orharbor.task_template.verify import BUNDLE

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # orharbor/, the package the bundle mirrors
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
        verify_file = problem_modules.part(problem, "verify").__file__
        assert verify_file is not None  # a module of the package, loaded from its file
        files[f"orharbor/problem_modules/{problem}/verify.py"] = Path(verify_file).read_bytes()
    return dict(sorted(files.items()))


#: Run by a fresh ``python3 -I -S``: {name: source} on stdin, {name: base64 of its checked hash-based .pyc} out.
#: A fresh interpreter, because marshal's output depends on what else the compiling process holds.
_COMPILE = """
import base64, importlib.util, json, sys
from importlib._bootstrap_external import _code_to_hash_pyc
out = {}
for name, text in json.load(sys.stdin).items():
    source = text.encode("utf-8")
    code = compile(source, name, "exec", dont_inherit=True)
    out[name] = base64.b64encode(_code_to_hash_pyc(code, importlib.util.source_hash(source), True)).decode()
json.dump(out, sys.stdout)
"""


def write_bundle(problem: str | None, tests_dir: Path) -> Path:
    """Write ``tests_dir/orharbor.zip``: :func:`bundle_files` and their bytecode, stored, with fixed times and modes."""
    target = tests_dir / BUNDLE
    target.write_bytes(_zip(problem))
    return target


@functools.cache
def _zip(problem: str | None) -> bytes:
    """The bundle's bytes, built once per problem and process."""
    files = bundle_files(problem)
    compiled = _bytecode(files)
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in files.items():
            entries = [(name, data)] + ([(name + "c", compiled[name])] if name in compiled else [])
            for entry, content in entries:
                info = zipfile.ZipInfo(entry, date_time=_EPOCH)
                info.external_attr = 0o100644 << 16
                info.create_system = 3  # Unix, whatever the exporting machine
                archive.writestr(info, content)
    return target.getvalue()


def _bytecode(files: dict[str, bytes]) -> dict[str, bytes]:
    """{module path: its checked hash-based .pyc}, compiled by a fresh interpreter of this Python."""
    sources = {name: data.decode("utf-8") for name, data in files.items() if name.endswith(".py")}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _COMPILE],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return {name: base64.b64decode(pyc) for name, pyc in json.loads(done.stdout).items()}


def unpack(tests_dir: Path) -> list[Path]:
    """Replace ``tests_dir/orharbor.zip`` by the tree of sources it holds (nothing if there is none); the files written."""
    archive_path = tests_dir / BUNDLE
    if not archive_path.is_file():
        return []
    written = []
    with zipfile.ZipFile(archive_path) as archive:
        for name in archive.namelist():
            if name.startswith("/") or ".." in name.split("/"):
                raise ValueError(f"{archive_path} names {name!r}, which is not a path inside it")
            if name.endswith(".pyc"):  # bytecode beside its source: a tree imports the source
                continue
            target = tests_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(name))
            written.append(target)
    archive_path.unlink()
    return written
