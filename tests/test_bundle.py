"""The verifier bundle: one stored zip in tests/, the same bytes from any export, imported from there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from bundled import rewrite_zip

from orharbor import problem_modules
from orharbor.exporter.bundle import bundle_files, unpack, write_bundle
from orharbor.task_template.verify import BUNDLE


#: Writes a bundle in a new process; "busy" first fills the interpreter (marshal's output depends on its state).
WRITE = """
import sys
from pathlib import Path
if sys.argv[3] == "busy":
    import asyncio, email.parser, http.client, json, numpy
from orharbor.exporter.bundle import write_bundle
write_bundle(None if sys.argv[1] == "-" else sys.argv[1], Path(sys.argv[2]))
"""


def _written(folder: Path, problem: str | None, busy: bool) -> bytes:
    folder.mkdir()
    subprocess.run(
        [sys.executable, "-c", WRITE, problem or "-", str(folder), "busy" if busy else "plain"], check=True, timeout=120
    )
    return (folder / BUNDLE).read_bytes()


@pytest.mark.parametrize("problem", ["jobshop", None])
@pytest.mark.slow
def test_the_bundle_is_the_same_bytes_whenever_and_wherever_it_is_written(tmp_path, problem):
    """Fixed entry times, modes and order, and bytecode from a fresh interpreter: an export's bytes do not depend
    on the clock, the umask or what the exporting process had imported before."""
    first = _written(tmp_path / "a", problem, busy=False)
    time.sleep(2.1)  # a zip's timestamps have 2-second steps
    old = os.umask(0o077)
    try:
        second = _written(tmp_path / "b", problem, busy=True)
    finally:
        os.umask(old)
    assert first == second
    with zipfile.ZipFile(tmp_path / "a" / BUNDLE) as archive:
        sources = list(bundle_files(problem))
        assert archive.namelist() == [name for source in sources for name in (source, source + "c")]
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}


def test_each_problem_bundle_holds_the_verifier_package_and_its_own_verify_only():
    for problem in problem_modules.names():
        names = set(bundle_files(problem))
        assert f"orharbor/problem_modules/{problem}/verify.py" in names
        assert "orharbor/verifiers/main.py" in names
        assert not [
            n
            for n in names
            if n.startswith("orharbor/problem_modules/")
            and f"/{problem}/" not in n
            and n != "orharbor/problem_modules/__init__.py"
        ], problem
    assert not [n for n in bundle_files(None) if "problem_modules" in n]


#: Imports two bundled modules and json from the bundle given, and prints where each came from.
IMPORTS = (
    "import sys; sys.path.insert(0, sys.argv[1]); import orharbor.problem_modules.jobshop.verify as v, "
    "orharbor.verifiers.main as m, json; print(v.__file__); print(m.__file__); print(json.__file__)"
)


def _imported(bundle: Path) -> list[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", IMPORTS, str(bundle)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()


def test_the_verifier_imports_bytecode_from_the_zip_and_nothing_from_the_tests_folder(tmp_path):
    """The zip goes on sys.path, the folder does not: a module beside it is not importable by the verifier.
    Each module is loaded from the bytecode the export compiled (a .pyc path), not compiled again."""
    bundle = tmp_path / "tests"
    bundle.mkdir()
    write_bundle("jobshop", bundle)
    (bundle / "json.py").write_text("raise SystemExit('planted')\n")
    out = _imported(bundle / BUNDLE)
    assert out[0] == str(bundle / BUNDLE / "orharbor/problem_modules/jobshop/verify.pyc")
    assert out[1] == str(bundle / BUNDLE / "orharbor/verifiers/main.pyc")
    assert not out[2].startswith(str(bundle))


#: Evaluates the answer on stdin ({"instance": ..., "solution": ...}) with the problem's verify.py of the bundle given.
EVALUATE = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import importlib; "
    "given = json.load(sys.stdin); verify = importlib.import_module(sys.argv[2]); "
    "print(json.dumps([verify.__file__, verify.evaluate(given['instance'], given['solution'])]))"
)


@pytest.mark.parametrize("problem", problem_modules.names())
def test_every_class_s_verifier_runs_from_the_bundle_alone(tmp_path, problem):
    """A class folder's own __init__.py imports every file of the class (PROBLEM is built from them), so the bundle
    holds an empty one beside verify.py: from the zip alone, with no orharbor installed, each class's verifier
    imports and scores the baseline as the package does."""
    cls = problem_modules.get(problem)
    instance = cls.generate(0, cls.SIZES[0])
    solution = cls.baseline(instance)
    bundle = write_bundle(problem, tmp_path)
    module = problem_modules.verifier_module_name(problem)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", EVALUATE, str(bundle), module],
        input=json.dumps({"instance": instance, "solution": solution}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    where, objective = json.loads(done.stdout)
    assert where.startswith(str(bundle)) and objective == cls.evaluate(instance, solution)


@pytest.mark.parametrize("change", ["another Python's magic number", "a source that no longer matches"])
def test_bytecode_that_does_not_fit_is_passed_over_for_the_source(tmp_path, change):
    """Another Python (a --base-image of 3.11) or a source edited after the export: the source is imported."""
    bundle = write_bundle("jobshop", tmp_path)
    if change == "another Python's magic number":
        rewrite_zip(bundle, lambda name, data: b"\x00\x00" + data[2:] if name.endswith(".pyc") else data)
    else:
        rewrite_zip(bundle, lambda name, data: data + b"\nEDITED = 1\n" if name.endswith("main.py") else data)
    out = _imported(bundle)
    assert out[1] == str(bundle / "orharbor/verifiers/main.py")
    assert out[0].endswith(".pyc") == (change != "another Python's magic number")


def test_unpack_gives_the_tree_and_removes_the_zip(tmp_path):
    write_bundle("rcpsp", tmp_path)
    written = unpack(tmp_path)
    assert not (tmp_path / BUNDLE).exists()
    assert {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in written} == bundle_files("rcpsp")
    assert not list(tmp_path.rglob("*.pyc"))  # a tree imports its sources
    assert unpack(tmp_path) == []


def test_unpack_refuses_a_name_outside_the_folder(tmp_path):
    with zipfile.ZipFile(tmp_path / BUNDLE, "w") as archive:
        archive.writestr("../escaped.py", "x = 1\n")
    with pytest.raises(ValueError, match="not a path inside it"):
        unpack(tmp_path)
    assert not (tmp_path.parent / "escaped.py").exists()
