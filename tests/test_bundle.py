"""The verifier bundle: one stored zip in tests/, the same bytes from any export, imported from there."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.exporter.bundle import bundle_files, unpack, write_bundle
from orharbor.task_template.verify import BUNDLE


def _write(folder: Path, problem: str | None) -> bytes:
    folder.mkdir()
    return write_bundle(problem, folder).read_bytes()


@pytest.mark.parametrize("problem", ["jobshop", None])
def test_the_bundle_is_the_same_bytes_whenever_and_wherever_it_is_written(tmp_path, problem):
    """Fixed entry times, modes and order: an export's bytes do not depend on the clock or the umask."""
    first = _write(tmp_path / "a", problem)
    time.sleep(2.1)  # a zip's timestamps have 2-second steps
    old = os.umask(0o077)
    try:
        second = _write(tmp_path / "b", problem)
    finally:
        os.umask(old)
    assert first == second
    with zipfile.ZipFile(tmp_path / "a" / BUNDLE) as archive:
        assert archive.namelist() == list(bundle_files(problem))
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}


def test_each_problem_bundle_holds_the_verifier_package_and_its_own_verify_only():
    for problem in problem_modules.names():
        names = set(bundle_files(problem))
        assert f"orharbor/problem_modules/{problem}/verify.py" in names
        assert "orharbor/verifiers/main.py" in names
        assert not [n for n in names if n.startswith("orharbor/problem_modules/") and f"/{problem}/" not in n
                    and n != "orharbor/problem_modules/__init__.py"], problem
    assert not [n for n in bundle_files(None) if "problem_modules" in n]


def test_the_verifier_imports_from_the_zip_and_nothing_from_the_tests_folder(tmp_path):
    """The zip goes on sys.path, the folder does not: a module beside it is not importable by the verifier."""
    bundle = tmp_path / "tests"
    bundle.mkdir()
    write_bundle("jobshop", bundle)
    (bundle / "json.py").write_text("raise SystemExit('planted')\n")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import orharbor.problem_modules.jobshop.verify as v, "
             "orharbor.verifiers.main as m, json; print(v.__file__); print(m.__file__); print(json.__file__)")
    out = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", probe, str(bundle / BUNDLE)],
                         capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert out[0] == str(bundle / BUNDLE / "orharbor/problem_modules/jobshop/verify.py")
    assert out[1] == str(bundle / BUNDLE / "orharbor/verifiers/main.py")
    assert not out[2].startswith(str(bundle))


def test_unpack_gives_the_tree_and_removes_the_zip(tmp_path):
    write_bundle("rcpsp", tmp_path)
    written = unpack(tmp_path)
    assert not (tmp_path / BUNDLE).exists()
    assert {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in written} == bundle_files("rcpsp")
    assert unpack(tmp_path) == []


def test_unpack_refuses_a_name_outside_the_folder(tmp_path):
    with zipfile.ZipFile(tmp_path / BUNDLE, "w") as archive:
        archive.writestr("../escaped.py", "x = 1\n")
    with pytest.raises(ValueError, match="not a path inside it"):
        unpack(tmp_path)
    assert not (tmp_path.parent / "escaped.py").exists()
