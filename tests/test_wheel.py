"""The package as a user installs it: sdist, then a wheel built from it, into a fresh venv outside the repository.

Everything the commands read at run time (task templates, shipped datasets and specs, the seccomp
profile, the recipes and the shipped benchmark release, the attack probes) must be inside the wheel:
the commands run from a folder with no checkout in reach. The fresh venv takes orharbor's
dependencies from the package index, pinned to the versions of this venv. uv installs them (6 s
here against pip's 125 s, most of it pip compiling every module of 770 MB); what lands in the
venv is the same wheels at the same versions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(*args, cwd: Path, env: dict | None = None, timeout: float = 1800) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, args))}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the fresh venv's bin folder, a work folder outside the repository)."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    # an sdist, then a wheel built from that sdist: what the sdist leaves out, the wheel lacks too
    run(sys.executable, "-m", "build", "--installer", "uv", "--outdir", dist, REPO, cwd=root)
    (wheel,) = dist.glob("orharbor-*.whl")
    assert len(list(dist.glob("orharbor-*.tar.gz"))) == 1
    venv = root / "fresh"
    run(getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv, cwd=root)
    pins = root / "constraints.txt"
    frozen = run(sys.executable, "-m", "pip", "freeze", "--exclude-editable", cwd=root).stdout
    pins.write_text(
        "\n".join(
            line
            for line in frozen.splitlines()  # versions only, no direct references
            if "==" in line and " @ " not in line and not line.startswith("orharbor")
        )
        + "\n"
    )
    run(
        sys.executable,
        "-m",
        "uv",
        "pip",
        "install",
        "--quiet",
        "--python",
        venv / "bin" / "python",
        "--constraint",
        pins,
        wheel,
        cwd=root,
    )
    work = root / "work"
    work.mkdir()
    return venv / "bin", work


def env_of(bin_dir: Path) -> dict:
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HARBOR_TELEMETRY": "0",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": "",
    }


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_installed_wheel_exports_verifies_checks_and_reports_outside_the_repository(installed):
    bin_dir, work = installed
    env = env_of(bin_dir)
    where = run(bin_dir / "python", "-c", "import orharbor; print(orharbor.__file__)", cwd=work, env=env).stdout
    assert Path(where.strip()).is_relative_to(bin_dir.parent) and not Path(where.strip()).is_relative_to(REPO)
    orharbor = bin_dir / "orharbor"
    assert "jobshop" in run(orharbor, "problems", cwd=work, env=env).stdout
    run(orharbor, "export", "--out", "tasks", cwd=work, env=env)  # every shipped row and spec
    run(orharbor, "export", "--release", "orharbor-bench@1.0", "--smoke", "--out", "smoke", cwd=work, env=env)
    assert (work / "smoke" / "registry.json").is_file() and list((work / "smoke").glob("jobshop-ta01*/task.toml"))
    run(orharbor, "export", "--release", "orharbor-bench@1.1", "--smoke", "--out", "smoke11", cwd=work, env=env)
    registry = json.loads((work / "smoke11" / "registry.json").read_text())
    assert [(d["name"], d["version"]) for d in registry] == [("orharbor-bench", "1.1-smoke")]
    task = work / "tasks" / "wtardiness-n8-l1-s0"
    verified = run(
        orharbor, "verify", task, "--solution", task / "solution" / "solution.json", "--json", cwd=work, env=env
    )
    assert json.loads(verified.stdout)["reward"] == 1.0
    (work / "one").mkdir()
    shutil.copytree(task, work / "one" / task.name)
    checked = run(orharbor, "check", "one", "-j", "1", "--jobs-dir", "jobs", cwd=work, env=env)
    assert "1/1 tasks passed" in checked.stdout
    (job,) = (work / "jobs").glob("check-*")
    report = json.loads(run(orharbor, "report", job, "--format", "json", cwd=work, env=env).stdout)
    assert report["trials"] == 3 and report["skipped_trials"] == 0
