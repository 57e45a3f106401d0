"""The verifier trusts nothing it did not bring (shared verifier mode: it runs in the agent's container).

A red team showed a live agent process racing Harbor's root upload of /logs/agent and
getting root to write a ``pyvenv.cfg`` and a ``.pth`` beside the interpreter, or a
module into /tests; the verifier's ``python3 -I`` then ran that code. Two layers stop it,
both in the task itself, so they hold on any provider:

- test.sh, in bash before Python starts, refuses a ``pyvenv.cfg``/``._pth`` where Python
  reads one and compares what Python reads and imports from /usr/local with the record
  the image build made, then runs ``python3 -I -S -B`` with an empty ``pycache_prefix``;
- verify.py checks /tests against ``tests/manifest.json`` (written at export) before it
  imports anything from there.

The unit tests cover the manifest and the record; the sandbox tests run Harbor's own
trial with an agent that plants as root (the provider flaw, simulated with
``exec(user="root")``), and show each plant winning once its defence is removed.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shutil
import string
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.image_facts import base_image, interpreter_record
from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.bundle import bundle_files, write_bundle
from orharbor.exporter.task_dir import seal, template_text, write_manifest
from orharbor.task_template import verify as entry

TEMPLATES = Path(entry.__file__).parent
DOCKERFILES = ("environment.Dockerfile", "modelling.Dockerfile", "verifier.Dockerfile", "modelling_verifier.Dockerfile")


def _smoke_row(rows: list[dict], level: int) -> dict:
    smoke = problem_modules.get("jobshop").SIZES[0]
    row = dict(next(r for r in rows if (r["problem"], r["level"], r["size"]) == ("jobshop", level, smoke)))
    if level == 2:  # as tests/test_attacks.py's attack_tasks: two hidden instances, 10-second runs
        for key in (
            "eval_seeds",
            "eval_references",
            "eval_baselines",
            "eval_reference_solutions",
            "eval_baseline_solutions",
            "eval_reference_metas",
        ):
            row[key] = row[key][:2]
        row["solve_time_limit_s"] = 10.0
    return row


@pytest.fixture(scope="module")
def shared_tasks(tmp_path_factory, shipped_rows) -> dict[int, Path]:
    """level -> a shared-mode job shop task of smoke size."""
    folder = tmp_path_factory.mktemp("trust-shared")
    return {
        level: export_row(_smoke_row(shipped_rows, level), folder, ExportOptions(verifier_mode="shared"))
        for level in (1, 2)
    }


def _tests_copy(task: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "tests"
    shutil.copytree(task / "tests", copy)
    return copy


# ---------------------------------------------------------------------- the manifest of tests/


@pytest.mark.parametrize("level", [1, 2])
def test_the_exporters_manifest_lists_exactly_what_it_wrote(shared_tasks, level):
    """Every file of tests/ but manifest.json, with its size and sha256, every folder; nothing else."""
    tests = shared_tasks[level] / "tests"
    manifest = json.loads((tests / entry.MANIFEST).read_text())
    files = {p.relative_to(tests).as_posix(): p for p in tests.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == set(files) - {entry.MANIFEST}
    assert {"test.sh", "verify.py", "task.json", entry.BUNDLE} <= set(manifest["files"])
    assert manifest["dirs"] == sorted(p.relative_to(tests).as_posix() for p in tests.rglob("*") if p.is_dir())
    import hashlib

    for name, meta in manifest["files"].items():
        data = files[name].read_bytes()
        assert meta == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}, name
    assert entry.problems(str(tests)) == []


def test_separate_mode_lists_the_verifier_dockerfile_too(shipped_rows, tmp_path):
    """The manifest is written last (seal), after tests/Dockerfile, which COPY . /tests bakes in."""
    task = export_row(_smoke_row(shipped_rows, 1), tmp_path, ExportOptions())
    assert "Dockerfile" in json.loads((task / "tests" / entry.MANIFEST).read_text())["files"]
    assert entry.problems(str(task / "tests")) == []


def _plant_extra(tests: Path) -> str:
    (tests / "json.py").write_text("raise SystemExit('planted')\n")
    return "json.py is not in the manifest"


def _plant_missing(tests: Path) -> str:
    (tests / entry.BUNDLE).unlink()
    return f"{entry.BUNDLE} is missing"


def _plant_changed(tests: Path) -> str:
    path = tests / entry.BUNDLE
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1  # same size, other bytes (inside a bundled module)
    path.write_bytes(bytes(data))
    return f"{entry.BUNDLE} differs from the manifest (sha256)"


def _plant_longer(tests: Path) -> str:
    path = tests / "task.json"
    size = path.stat().st_size
    path.write_bytes(path.read_bytes() + b" ")
    return f"task.json has {size + 1} bytes, the manifest {size}"


def _plant_symlink(tests: Path) -> str:
    target = tests / entry.BUNDLE
    data = target.read_bytes()
    target.unlink()
    (tests.parent / "elsewhere.zip").write_bytes(data)  # same bytes: only the link gives it away
    target.symlink_to(tests.parent / "elsewhere.zip")
    return f"{entry.BUNDLE} is a symbolic link"


def _plant_fifo(tests: Path) -> str:
    os.mkfifo(tests / "eval" / "sitecustomize.py")
    return "eval/sitecustomize.py is a FIFO"


def _plant_folder(tests: Path) -> str:
    (tests / "json").mkdir()
    (tests / "json" / "__init__.py").write_text("")
    return "json is a folder the manifest does not list"


def _plant_pycache(tests: Path) -> str:
    (tests / "eval" / "__pycache__").mkdir()
    return "eval/__pycache__ is a folder the manifest does not list"


PLANTS = {
    "extra": _plant_extra,
    "missing": _plant_missing,
    "changed": _plant_changed,
    "longer": _plant_longer,
    "symlink": _plant_symlink,
    "fifo": _plant_fifo,
    "folder": _plant_folder,
    "pycache": _plant_pycache,
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_each_difference_from_the_manifest_is_refused_naming_it(shared_tasks, tmp_path, plant):
    tests = _tests_copy(shared_tasks[2], tmp_path)
    assert entry.problems(str(tests)) == []
    expected = PLANTS[plant](tests)
    reasons = entry.problems(str(tests))
    assert reasons == [f"{tests}/{expected}"]


def test_a_missing_or_damaged_manifest_is_refused(shared_tasks, tmp_path):
    tests = _tests_copy(shared_tasks[1], tmp_path)
    manifest = tests / entry.MANIFEST
    manifest.write_text('{"files": [], "dirs": []}')
    assert entry.problems(str(tests)) == [f"{manifest} is unusable (not an orharbor tests manifest)"]
    manifest.unlink()
    [reason] = entry.problems(str(tests))
    assert reason.startswith(f"{manifest} is unusable")
    os.mkfifo(manifest)
    assert entry.problems(str(tests)) == [f"{manifest} is unusable (a FIFO, not a file)"]


def test_a_planted_tree_costs_only_the_first_few_reasons(shared_tasks, tmp_path):
    """Reasons stop at MAX_REASONS, so a folder of many planted entries is not walked to its end."""
    tests = _tests_copy(shared_tasks[1], tmp_path)
    for i in range(50):
        (tests / f"planted_{i}.py").write_text("")
    assert len(entry.problems(str(tests))) == entry.MAX_REASONS


def test_a_folder_that_cannot_be_listed_is_a_reason_not_a_crash(shared_tasks, tmp_path, monkeypatch):
    tests = _tests_copy(shared_tasks[2], tmp_path)
    real = entry.os.scandir

    def scandir(path):
        if str(path).endswith("eval"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(entry.os, "scandir", scandir)
    assert entry.problems(str(tests)) == [f"{tests}/eval cannot be checked (Permission denied)"]


def test_write_manifest_after_an_edit_makes_the_folder_match_again(shared_tasks, tmp_path):
    """What a mutation test (or anyone editing tests/) does after its edit."""
    tests = _tests_copy(shared_tasks[1], tmp_path)
    _plant_changed(tests)
    assert entry.problems(str(tests))
    write_manifest(tests)
    assert entry.problems(str(tests)) == []


# ---------------------------------------------------------------------- the verify.py entry (c)

#: A module planted in /tests that shadows one the verifier imports after the check (argparse: main.py's).
SHADOW = "import os\nopen(os.environ.get('ORH_MARKER', '/nonexistent'), 'w').write('ran')\nos._exit(0)\n"


def _run_entry(tests: Path, marker: Path) -> subprocess.CompletedProcess:
    """verify.py as test.sh runs it, in-container. The planted module (if it runs) exits at once, so
    main() never starts (it would end every non-root process of this machine)."""
    command = [
        sys.executable,
        "-I",
        "-S",
        "-B",
        str(tests / "verify.py"),
        "--in-container",
        "--logs-dir",
        str(tests.parent / "logs"),
    ]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, env={**os.environ, "ORH_MARKER": str(marker)}
    )


def test_a_module_planted_in_tests_never_runs(shared_tasks, tmp_path):
    """(c) An extra argparse.py in /tests: status 3 and the reason, before the folder is on sys.path."""
    tests = _tests_copy(shared_tasks[1], tmp_path)
    (tests / "argparse.py").write_text(
        SHADOW.replace("os.environ.get('ORH_MARKER', '/nonexistent')", repr(str(tmp_path / "marker")))
    )
    result = _run_entry(tests, tmp_path / "marker")
    assert result.returncode == entry.TAMPERED, result.stderr
    assert result.stdout == f"verifier environment tampered: {tests}/argparse.py is not in the manifest\n"
    assert not (tmp_path / "marker").exists() and not (tmp_path / "logs").exists()


def test_without_the_check_the_planted_module_runs(shared_tasks, tmp_path):
    """Mutation of (c): verify.py without its manifest check (manifest rewritten) imports a module planted in
    its bundle."""
    tests = _tests_copy(shared_tasks[1], tmp_path)
    text = (tests / "verify.py").read_text()
    assert "        found = problems(here)\n" in text
    (tests / "verify.py").write_text(text.replace("        found = problems(here)\n", "        found = []\n"))
    with zipfile.ZipFile(tests / entry.BUNDLE, "a") as bundle:  # the bundle is what goes on sys.path
        bundle.writestr(
            "argparse.py",
            SHADOW.replace("os.environ.get('ORH_MARKER', '/nonexistent')", repr(str(tmp_path / "marker"))),
        )
    write_manifest(tests)
    result = _run_entry(tests, tmp_path / "marker")
    assert (tmp_path / "marker").read_text() == "ran", (result.stdout, result.stderr)


def test_verify_py_imports_only_the_standard_library_before_its_check():
    """Everything verify.py imports before the check is the standard library's (json, hashlib, os, stat, sys)."""
    text = (TEMPLATES / "verify.py").read_text()
    head = text.split("def run()")[0]
    imported = set(re.findall(r"^import (\w+)", head, flags=re.MULTILINE))
    assert imported == {"hashlib", "json", "os", "stat", "sys"}
    assert imported <= set(sys.stdlib_module_names)
    assert not [line for line in head.splitlines() if line.startswith("from ")]


# ---------------------------------------------------------------------- the interpreter record


def _dockerfile_runs(dockerfile: str) -> list[str]:
    """The RUN commands of a Dockerfile template, rendered as the exporter does (continuation lines joined)."""
    text = string.Template(template_text(dockerfile)).safe_substitute(
        base_image_check=base_image.dockerfile_step(), interpreter_record=interpreter_record.dockerfile_step()
    )
    return re.findall(r"^RUN (.*?)(?<!\\)$", text.replace("\\\n", " "), flags=re.MULTILINE)


def _record_command(dockerfile: str = "environment.Dockerfile") -> str:
    """The shell command of the Dockerfile's interpreter record."""
    (record,) = [run for run in _dockerfile_runs(dockerfile) if "share/orharbor/interpreter.list" in run]
    return record


def test_every_image_the_verifier_runs_in_records_its_interpreter_right_after_the_base_image_check():
    """The same record step in every image, right after the base image check, so its layer is shared by every
    task's image; no later step writes what it records (pip goes to site-packages and venvs)."""
    for name in DOCKERFILES:
        runs = _dockerfile_runs(name)
        assert "orharbor: this base image cannot carry" in runs[0], name
        assert runs[1] == interpreter_record.command(), name
        assert all("/usr/local/lib" not in run and "share/orharbor" not in run for run in runs[2:]), name
    assert "&&" not in interpreter_record.command()


def _fake_prefix(root: Path) -> Path:
    """/usr/local as the python image has it, in small."""
    for folder in (
        "bin",
        "lib/python3.12/encodings",
        "lib/python3.12/lib-dynload",
        "lib/python3.12/__pycache__",
        "lib/python3.12/site-packages",
        "lib/node_modules",
        "share",
    ):
        (root / folder).mkdir(parents=True)
    (root / "bin" / "python3.12").write_text("#!/bin/sh\n# the interpreter: the record's compile step runs it\n")
    (root / "bin" / "python3.12").chmod(0o755)
    (root / "bin" / "python3").symlink_to("python3.12")
    (root / "bin" / "claude").write_text("installed later by an agent, as root")
    (root / "lib" / "libpython3.12.so.1.0").write_bytes(b"\x7fELF library")
    (root / "lib" / "python3.12" / "os.py").write_text("# os\n")
    (root / "lib" / "python3.12" / "encodings" / "__init__.py").write_text("# encodings\n")
    (root / "lib" / "python3.12" / "lib-dynload" / "_json.so").write_bytes(b"\x7fELF json")
    (root / "bin" / "python3-config").write_text("# not read by python3")
    compiled = root / "share" / "orharbor" / "pycache" / "usr" / "local" / "lib" / "python3.12"
    compiled.mkdir(parents=True)  # as the record's compile step leaves it (the fake python3 compiles nothing)
    (compiled / "os.cpython-312.pyc").write_bytes(b"\xcb\r\r\n compiled os")
    return root


def _check_script(prefix: Path) -> str:
    """test.sh's interpreter check, pointed at ``prefix`` instead of /usr/local."""
    text = (TEMPLATES / "test.sh").read_text().replace("$$", "$")
    functions = re.findall(
        r"^(interpreter_entries\(\) \{.*?^\}|untrusted_interpreter\(\) \{.*?^\})", text, flags=re.MULTILINE | re.DOTALL
    )
    assert len(functions) == 2
    body = (
        "\n".join(functions)
        .replace("/usr/local", str(prefix))
        .replace("/etc/ld.so.preload", str(prefix / "no-preload"))
    )
    return (
        body.replace('[ "$(stat -c %u "$f")" != 0 ]', f'[ "$(stat -c %u "$f")" != {os.geteuid()} ]')
        + "\nuntrusted_interpreter\n"
    )


def _edit_keeping_size_and_mtime(path: Path) -> None:
    """The stale-key attack: same size, same inode, the old mtime put back (only the ctime cannot be)."""
    before = path.stat()
    path.write_text(path.read_text().swapcase())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def _record(prefix: Path) -> None:
    command = _record_command("environment.Dockerfile").replace("/usr/local", str(prefix))
    subprocess.run(["sh", "-c", command], check=True, capture_output=True)


def _untrusted(prefix: Path) -> str:
    return subprocess.run(
        ["bash", "-c", _check_script(prefix)], capture_output=True, text=True, timeout=60
    ).stdout.strip()


#: Where the fake record's compiled bytecode is (mirroring the standard library's absolute path).
PYC = Path("share", "orharbor", "pycache", "usr", "local", "lib", "python3.12")
INTERPRETER_PLANTS = {
    "pyvenv.cfg beside": (lambda p: (p / "bin" / "pyvenv.cfg").write_text("home = /tmp\n"), "bin/pyvenv.cfg is there"),
    "pyvenv.cfg above": (lambda p: (p / "pyvenv.cfg").write_text("home = /tmp\n"), "pyvenv.cfg is there"),
    "._pth beside": (lambda p: (p / "bin" / "python3._pth").write_text("/tmp\n"), "bin/python3._pth is there"),
    "._pth of libpython": (
        lambda p: (p / "lib" / "libpython3.12.so.1.0._pth").write_text("/tmp\n"),
        "lib/libpython3.12.so.1.0._pth is there",
    ),
    "python312.zip": (lambda p: (p / "lib" / "python312.zip").write_bytes(b"PK"), "lib/python312.zip is there"),
    "stdlib module": (
        lambda p: (p / "lib" / "python3.12" / "json.py").write_text("x = 1\n"),
        "differs from its image build record: \tf 6 lib/python3.12/json.py",
    ),
    "edited stdlib": (
        lambda p: (p / "lib" / "python3.12" / "os.py").write_text("# sO\n"),
        "differs from its image build record: lib/python3.12/os.py: FAILED",
    ),
    "edited stdlib, size and mtime kept": (
        lambda p: _edit_keeping_size_and_mtime(p / "lib" / "python3.12" / "os.py"),
        "differs from its image build record: lib/python3.12/os.py: FAILED",
    ),
    "edited interpreter": (
        lambda p: (p / "bin" / "python3.12").write_text((p / "bin" / "python3.12").read_text().upper()),
        "differs from its image build record: bin/python3.12: FAILED",
    ),
    "relinked python3": (
        lambda p: ((p / "bin" / "python3").unlink(), (p / "bin" / "python3").symlink_to("/tmp/x")),
        "differs from its image build record: d lib/python3.12",
    ),  # it no longer leads there
    "prefix landmark": (lambda p: (p / "bin" / "lib").mkdir(), "bin/lib is there"),
    "build-tree marker": (lambda p: (p / "bin" / "pybuilddir.txt").write_text("x"), "bin/pybuilddir.txt is there"),
    "FIFO in lib-dynload": (
        lambda p: os.mkfifo(p / "lib" / "python3.12" / "lib-dynload" / "_x.so"),
        "differs from its image build record: \tp lib/python3.12/lib-dynload/_x.so",
    ),
    "bytecode planted": (
        lambda p: (p / PYC / "json.cpython-312.pyc").write_bytes(b"\xcb\r\r\n\x01"),
        "differs from its image build record: \tf 5 share/orharbor/pycache",
    ),
    "bytecode edited": (
        lambda p: (p / PYC / "os.cpython-312.pyc").write_bytes(b"\xcb\r\r\n COMPILED OS"),
        "differs from its image build record: share/orharbor/pycache/usr/local/lib/python3.12/"
        "os.cpython-312.pyc: FAILED",
    ),
    "bytecode folder replaced": (
        lambda p: (
            shutil.rmtree(p / "share" / "orharbor" / "pycache"),
            (p / "share" / "orharbor" / "pycache").symlink_to("/tmp"),
        ),
        "differs from its image build record",
    ),
    "no record": (lambda p: (p / "share" / "orharbor" / "interpreter.sha256").unlink(), "no root-owned"),
}


def test_the_record_and_the_check_agree_and_ignore_what_python_does_not_read(tmp_path):
    """Untouched, or with site-packages, __pycache__ and other /usr/local entries added: trusted."""
    prefix = _fake_prefix(tmp_path / "local")
    _record(prefix)
    listed = (prefix / "share" / "orharbor" / "interpreter.list").read_text()
    assert "lib/python3.12/os.py" in listed and "l bin/python3 python3.12" in listed
    assert "site-packages" not in listed and "__pycache__" not in listed and "claude" not in listed
    assert "python3-config" not in listed and "l bin/python3 python3.12" in listed
    assert _untrusted(prefix) == ""
    (prefix / "lib" / "python3.12" / "site-packages" / "evil.pth").write_text("import os\n")
    (prefix / "lib" / "python3.12" / "__pycache__" / "os.cpython-312.pyc").write_bytes(b"planted")
    (prefix / "bin" / "codex").write_text("another agent")
    (prefix / "lib" / "node_modules" / "x").write_text("")
    (prefix / "lib" / "python3.11" / "dist-packages").mkdir(parents=True)  # Debian's python3, installed later
    (prefix / "lib" / "python3.12" / "dist-packages" / "absl").mkdir(parents=True)  # Debian's pip, as root
    (prefix / "lib" / "python3.12" / "dist-packages" / "absl" / "__init__.py").write_text("")
    (prefix / "bin" / "python3-config").write_text("# rewritten")
    assert _untrusted(prefix) == ""


@pytest.mark.parametrize("plant", sorted(INTERPRETER_PLANTS))
def test_the_check_refuses_each_change_python_would_read(tmp_path, plant):
    prefix = _fake_prefix(tmp_path / "local")
    _record(prefix)
    change, expected = INTERPRETER_PLANTS[plant]
    change(prefix)
    reason = _untrusted(prefix)
    assert expected in reason, reason


@pytest.mark.parametrize(
    "plant", ["pyvenv.cfg beside", "pyvenv.cfg above", "._pth beside", "python312.zip", "prefix landmark"]
)
def test_what_python_reads_before_any_code_is_refused_even_with_the_record_rewritten(tmp_path, plant):
    """These names are refused by name: an attacker who plants one and records the result still loses."""
    prefix = _fake_prefix(tmp_path / "local")
    change, expected = INTERPRETER_PLANTS[plant]
    change(prefix)
    _record(prefix)
    assert expected in _untrusted(prefix)


def test_a_record_that_lists_dist_packages_refuses_what_pip_installs_after_it(tmp_path):
    """Mutation: on a Debian-built Python, pip as root installs into /usr/local/lib/python3.X/dist-packages, after
    the record (an image's modelling stack). Listed like the standard library, it fails every verify of the image
    (podman's e2e run found it); only site reads it, and the verifier runs with -S."""
    prefix = _fake_prefix(tmp_path / "local")
    prune = ' -o -path "lib/$v/dist-packages"'
    command = _record_command().replace("/usr/local", str(prefix))
    assert prune in command and prune in _check_script(prefix)
    subprocess.run(["sh", "-c", command.replace(prune, "")], check=True, capture_output=True)
    (prefix / "lib" / "python3.12" / "dist-packages" / "absl").mkdir(parents=True)
    script = _check_script(prefix).replace(prune, "")
    reason = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60).stdout.strip()
    assert reason.endswith("\td lib/python3.12/dist-packages"), reason


def test_keying_a_copied_record_again_keeps_the_build_s_keys_of_the_standard_library(tmp_path):
    """The bubblewrap cache keys its copies of the record's bytecode again; the standard library keeps the keys
    the build wrote, so a same-size edit to it since then is still hashed and refused (mutation: keying every
    listed file again, as the record step does, lets it through)."""
    prefix = _fake_prefix(tmp_path / "local")
    (prefix / PYC).mkdir(parents=True, exist_ok=True)
    (prefix / PYC / "os.cpython-312.pyc").write_bytes(b"bytecode of os")
    _record(prefix)
    os_py = prefix / "lib" / "python3.12" / "os.py"
    os_py.write_text(os_py.read_text().upper())  # the same size
    cached = prefix / "share" / "orharbor" / "pycache"
    for path in [p for p in cached.rglob("*") if p.is_file()]:  # a copy: new inodes and times
        data = path.read_bytes()
        path.unlink()
        path.write_bytes(data)
    for command, stale in ((interpreter_record.rekey_command(), "os.py"), (interpreter_record.keys_command(), "")):
        subprocess.run(["sh", "-c", command], cwd=prefix, check=True, capture_output=True)
        reason = _untrusted(prefix)
        assert stale in reason if stale else reason == "", (command, reason)


def test_limit_a_stdlib_edit_recorded_again_is_not_seen(tmp_path):
    """The honest limit: the record lives in the agent's image. Root that edits the standard library and
    rewrites the record is not seen by this check (docs/security.md: shared mode does not stand up to root)."""
    prefix = _fake_prefix(tmp_path / "local")
    _record(prefix)
    (prefix / "lib" / "python3.12" / "os.py").write_text("# edited\n")
    assert "os.py" in _untrusted(prefix)
    _record(prefix)
    assert _untrusted(prefix) == ""


def test_python_reads_a_pth_file_beside_it_even_with_I_S(tmp_path):
    """Why test.sh refuses ._pth files: CPython 3.12 honours them on Linux too, before any of our code."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    prefix = tmp_path / "py"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    shutil.copy2(base / "bin" / version, prefix / "bin" / version)
    (prefix / "lib" / version).symlink_to(base / "lib" / version)
    code = "import sys; print(sys.path[0])"
    plain = subprocess.run([str(prefix / "bin" / version), "-I", "-S", "-c", code], capture_output=True, text=True)
    if plain.returncode != 0:
        pytest.skip(f"this interpreter cannot run from a copy: {plain.stderr.strip()[-200:]}")
    (prefix / "bin" / f"{version}._pth").write_text(
        f"{tmp_path / 'planted'}\n{base / 'lib' / version}\n{base / 'lib' / version / 'lib-dynload'}\n"
    )
    planted = subprocess.run([str(prefix / "bin" / version), "-I", "-S", "-c", code], capture_output=True, text=True)
    assert planted.stdout.strip() == str(tmp_path / "planted"), planted.stderr


# ---------------------------------------------------------------------- integrity.py


def test_integrity_wants_isolated_and_no_site(monkeypatch):
    from orharbor.verifiers import integrity

    class Flags:
        isolated, no_site = 1, 0

    monkeypatch.setattr(integrity.sys, "flags", Flags)
    assert any("-S" in reason for reason in integrity.tampering())
    Flags.isolated, Flags.no_site = 0, 1
    assert any("-I" in reason for reason in integrity.tampering())
    monkeypatch.setattr(integrity.sys, "prefix", "/somewhere/venv")
    assert any("pyvenv.cfg" in reason for reason in integrity.tampering())


# ---------------------------------------------------------------------- end to end, through Harbor's trial

#: Writes the reward at the verifier's exit, after the verifier's own.
WIN = "import atexit; atexit.register(lambda: open('/logs/verifier/reward.json', 'w').write('{\"reward\": 1.0}'))"
#: A stdlib module's stand-in: registers WIN, then loads the real module under its name.
SHADOW_STDLIB = (
    WIN + "\n"
    "import importlib.util, sys\n"
    "_spec = importlib.util.spec_from_file_location('argparse', "
    "f'/usr/local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/argparse.py')\n"
    "_real = importlib.util.module_from_spec(_spec)\n"
    "sys.modules['argparse'] = _real\n"
    "_spec.loader.exec_module(_real)\n"
)
#: argparse's stand-in as bytecode: registers WIN, then runs the real module's source in its place.
SHADOW_BYTECODE = (
    WIN + "\n"
    "import sys\n"
    "_path = f'/usr/local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/argparse.py'\n"
    "exec(compile(open(_path).read(), _path, 'exec'))\n"
)
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
#: What the agent plants as root (each a shell script; /tmp/orh-plant holds the uploaded payloads).
ROOT_PLANTS = {
    # (a) the red team's: a pyvenv.cfg beside python3, and a .pth in the site-packages it names
    "pyvenv-pth": (
        f"printf 'home = /usr/local/bin\\ninclude-system-site-packages = false\\n' "
        f"> /usr/local/bin/pyvenv.cfg\n"
        f"cp /tmp/orh-plant/win.pth /usr/local/lib/python{VERSION}/site-packages/orh-win.pth\n"
    ),
    # (a') a pyvenv.cfg whose home moves the standard library to a copy with one module replaced: -S does not help
    "pyvenv-home": (
        f"mkdir -p /opt/evil/lib/python{VERSION}\n"
        f'for f in /usr/local/lib/python{VERSION}/*; do ln -s "$f" /opt/evil/lib/python{VERSION}/; done\n'
        f"rm /opt/evil/lib/python{VERSION}/argparse.py\n"
        f"cp /tmp/orh-plant/argparse.py /opt/evil/lib/python{VERSION}/argparse.py\n"
        f"printf 'home = /opt/evil/bin\\n' > /usr/local/bin/pyvenv.cfg\n"
    ),
    # (b) a python312.zip, first on sys.path, shadowing argparse
    "stdlib-zip": f"cp /tmp/orh-plant/stdlib.zip /usr/local/lib/python{VERSION.replace('.', '')}.zip\n",
    # (c) argparse's compiled bytecode replaced, as an unchecked hash-based .pyc (loaded without a look at the source)
    "bytecode": (
        "/usr/local/bin/python3 -I -c \"import py_compile as c; c.compile('/tmp/orh-plant/argparse_pyc.py', "
        f"cfile='{interpreter_record.PYCACHE}/usr/local/lib/python{VERSION}/argparse.cpython-"
        f"{VERSION.replace('.', '')}.pyc', doraise=True, "
        'invalidation_mode=c.PycInvalidationMode.UNCHECKED_HASH)"\n'
    ),
}


def _payloads(folder: Path) -> None:
    (folder / "win.pth").write_text(WIN + "\n")
    (folder / "argparse.py").write_text(SHADOW_STDLIB)
    (folder / "argparse_pyc.py").write_text(SHADOW_BYTECODE)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("argparse.py", SHADOW_STDLIB)
    (folder / "stdlib.zip").write_bytes(buffer.getvalue())


try:
    from harbor.agents.base import BaseAgent
except ImportError:  # pragma: no cover - harbor is a dependency
    BaseAgent = object


class RootPlantAgent(BaseAgent):
    """Test-only Harbor agent: plants one of :data:`ROOT_PLANTS` as ROOT (the provider flaw), hands in nothing."""

    def __init__(self, logs_dir: Path, plant: str, **kwargs) -> None:
        super().__init__(logs_dir=logs_dir, **kwargs)
        self.plant = plant

    @staticmethod
    def name() -> str:
        return "orharbor-root-plant"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment) -> None:
        return

    async def run(self, instruction: str, environment, context) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            _payloads(Path(scratch))
            for name in ("win.pth", "argparse.py", "argparse_pyc.py", "stdlib.zip"):
                await environment.upload_file(Path(scratch) / name, f"/tmp/orh-plant/{name}")
        result = await environment.exec(ROOT_PLANTS[self.plant], user="root")
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "plant.txt").write_text(
            f"exit {result.return_code}\n{result.stdout or ''}{result.stderr or ''}"
        )
        context.metadata = {**(context.metadata or {}), "exit_code": result.return_code}


def _trial_rewards(tasks: list[tuple[Path, str]], jobs_dir: Path) -> list[tuple[float | None, str]]:
    """(reward, details error) of a Harbor trial of each (task, plant), two at a time."""
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    os.environ.setdefault("HARBOR_TELEMETRY", "0")

    async def one(task: Path, plant: str, semaphore: asyncio.Semaphore):
        name = f"{task.name}__{plant}"
        config = TrialConfig(
            task=TaskConfig(path=task.resolve()),
            trial_name=name,
            trials_dir=jobs_dir,
            agent=AgentConfig(import_path=f"{__name__}:RootPlantAgent", kwargs={"plant": plant}),
            environment=EnvironmentConfig(import_path="orharbor.harbor_env:BubblewrapEnvironment"),
        )
        async with semaphore:
            outcome = await (await Trial.create(config)).run()
        rewards = outcome.verifier_result.rewards if outcome.verifier_result is not None else None
        plant_log = jobs_dir / name / "agent" / "plant.txt"
        assert plant_log.read_text().startswith("exit 0"), plant_log.read_text()
        details = jobs_dir / name / "verifier" / "details.json"
        error = json.loads(details.read_text()).get("error", "") if details.is_file() else ""
        return (rewards or {}).get("reward"), error

    async def main():
        semaphore = asyncio.Semaphore(2)
        return await asyncio.gather(*(one(task, plant, semaphore) for task, plant in tasks))

    return asyncio.run(main())


#: Mutations of test.sh (the manifest rewritten after the edit, as an honest edit would).
NO_PRECHECK = ("reason=$(untrusted_interpreter)\n", "reason=\n")
I_ONLY = (
    "/usr/local/bin/python3 -I -S -B -X pycache_prefix=/usr/local/share/orharbor/pycache ",
    "/usr/local/bin/python3 -I ",
)
#: plant -> the defences its mutation removes
MUTATIONS = {
    "pyvenv-pth": [NO_PRECHECK, I_ONLY],
    "pyvenv-home": [NO_PRECHECK],
    "stdlib-zip": [NO_PRECHECK],
    "bytecode": [NO_PRECHECK],
}


def _weakened(task: Path, tmp_path: Path, edits: list[tuple[str, str]]) -> Path:
    copy = tmp_path / "weakened" / task.name
    shutil.copytree(task, copy)
    test_sh = copy / "tests" / "test.sh"
    text = test_sh.read_text()
    for old, new in edits:
        assert old in text, f"defence {old!r} not found in test.sh: update this test"
        text = text.replace(old, new)
    test_sh.write_text(text)
    seal(copy / "tests")
    return copy


@pytest.mark.sandbox
def test_root_plants_score_the_failure_reward_at_both_levels(shared_tasks, tmp_path):
    """Each plant, as root during the agent phase, through Harbor's trial: the failure reward, 'tampered'."""
    runs = [(shared_tasks[level], plant) for level in (1, 2) for plant in sorted(ROOT_PLANTS)]
    outcomes = _trial_rewards(runs, tmp_path / "jobs")
    for (task, plant), (reward, error) in zip(runs, outcomes):
        print(task.name, plant, reward, error)
        assert reward == -1.0, (task.name, plant, reward, error)
        assert error.startswith("verifier environment tampered: /usr/local"), (task.name, plant, error)


@pytest.mark.sandbox
def test_without_its_defence_each_root_plant_wins(shared_tasks, tmp_path):
    """Mutation: the same plants against test.sh without the pre-check (and -S, for the .pth) score 1.0."""
    runs = [(_weakened(shared_tasks[1], tmp_path / plant, MUTATIONS[plant]), plant) for plant in sorted(MUTATIONS)]
    runs.append((_weakened(shared_tasks[2], tmp_path / "l2", MUTATIONS["stdlib-zip"]), "stdlib-zip"))
    outcomes = _trial_rewards(runs, tmp_path / "jobs")
    for (task, plant), (reward, error) in zip(runs, outcomes):
        print(task.name, plant, reward, error)
        assert reward is not None and reward > -1.0, (task.name, plant, reward, error)


def test_only_files_whose_key_changed_are_hashed_again(tmp_path):
    """A wrong hash recorded for an untouched file goes unseen (it is not hashed again); once the file's ctime
    moves (here: its mode set to what it was), it is hashed and the difference is found."""
    prefix = _fake_prefix(tmp_path / "local")
    _record(prefix)
    record = prefix / "share" / "orharbor" / "interpreter.sha256"
    lines = record.read_text().splitlines()
    record.write_text(
        "".join(("0" * 64 + line[64:] if line.endswith("lib/python3.12/os.py") else line) + "\n" for line in lines)
    )
    assert _untrusted(prefix) == ""
    os.chmod(prefix / "lib" / "python3.12" / "os.py", (prefix / "lib" / "python3.12" / "os.py").stat().st_mode)
    assert "lib/python3.12/os.py: FAILED" in _untrusted(prefix)


def test_a_key_without_the_ctime_lets_the_stale_key_edit_through(tmp_path):
    """Mutation: keyed by inode, size and mtime alone, an edit that puts the mtime back is never hashed."""
    prefix = _fake_prefix(tmp_path / "local")
    weak = "%i %s %.9Y %n"
    command = _record_command("environment.Dockerfile").replace("/usr/local", str(prefix))
    subprocess.run(["sh", "-c", command.replace("%i %s %.9Y %.9Z %n", weak)], check=True, capture_output=True)
    _edit_keeping_size_and_mtime(prefix / "lib" / "python3.12" / "os.py")
    script = _check_script(prefix).replace("%i %s %.9Y %.9Z %n", weak).replace("cut -d ' ' -f 5-", "cut -d ' ' -f 4-")
    reason = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60).stdout.strip()
    assert reason == "", reason


# ---------------------------------------------------------------------- the bytecode the record compiles

#: Run in a verifier bundle's folder with the record's pycache_prefix: the standard-library modules it imports
#: (every module of the bundle imported) whose bytecode is not in the prefix, one per line.
UNCOMPILED = """
import sys
before = set(sys.modules)
import importlib, importlib.machinery, importlib.util, os
bundle, stdlib, *names = sys.argv[1:]
sys.path.insert(0, bundle)
for name in names:
    importlib.import_module(name)
for name, module in sorted(sys.modules.items()):
    source = getattr(module, "__file__", None) or ""
    if (isinstance(getattr(module, "__loader__", None), importlib.machinery.SourceFileLoader)
            and source.startswith(stdlib + os.sep) and "site-packages" not in source
            and (name not in before or name.startswith("importlib"))):
        if not os.path.exists(importlib.util.cache_from_source(source)):
            print(name)
"""


def _uncompiled(tmp_path: Path, modules: tuple[str, ...]) -> dict[str, list[str]]:
    """Per verifier bundle (each problem's, and the modelling one): what it imports that the record did not compile,
    the record run with this Python and ``modules``."""
    prefix = tmp_path / "pycache"
    subprocess.run(
        [sys.executable, "-I", "-S", "-X", f"pycache_prefix={prefix}", "-c", interpreter_record.COMPILE, *modules],
        check=True,
        timeout=120,
    )
    missing = {}
    for problem in [*problem_modules.names(), None]:
        folder = tmp_path / f"bundle-{problem}"
        folder.mkdir()
        bundle = write_bundle(problem, folder)  # imported from the zip, as verify.py does
        names = [
            name[:-3].replace("/", ".")
            for name in bundle_files(problem)
            if name.endswith(".py") and not name.endswith("__init__.py")
        ]
        found = subprocess.run(
            [
                sys.executable,
                "-I",
                "-S",
                "-B",
                "-X",
                f"pycache_prefix={prefix}",
                "-c",
                UNCOMPILED,
                str(bundle),
                sysconfig.get_paths()["stdlib"],
                *names,
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        missing[str(problem)] = found.stdout.split()
    return missing


def test_the_record_compiles_every_standard_library_module_the_verifier_imports(tmp_path):
    """Each problem's bundle and the modelling one import only standard-library modules whose bytecode the
    record compiled, so no verify compiles the standard library from source."""
    assert {"argparse", "json", "subprocess", "hashlib", "tempfile"} <= set(interpreter_record.verifier_stdlib())
    missing = _uncompiled(tmp_path, interpreter_record.verifier_stdlib())
    assert not any(missing.values()), missing


def test_a_record_compiling_too_little_leaves_modules_to_compile_at_every_verify(tmp_path):
    """Mutation: without the modules the verifier imports by name (json, argparse...), the check above fails."""
    modules = tuple(m for m in interpreter_record.verifier_stdlib() if m not in ("argparse", "json"))
    missing = _uncompiled(tmp_path, modules)
    assert all({"argparse", "json"} <= set(names) for names in missing.values()), missing
