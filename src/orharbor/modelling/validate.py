"""validate-specs: every golden script, run on a clean copy of its template, must produce its outputs.

In the sandbox (the default; as ``orharbor check``: bubblewrap, root, the
task image's modelling stack mirrored at ``/usr/local``) the script runs as the
agent's unprivileged user in ``/app``; with ``sandbox=False`` it runs here,
with this interpreter, in a temporary folder. A spec whose golden script fails,
runs over its time limit or writes outputs that differ from the required ones is an error.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from orharbor.modelling.spec import Spec, read_specs
from orharbor.verifiers.modelling import check_output, read_text
from orharbor.verifiers.safe_json import BadOutput

AGENT_UID = 1000


@dataclass
class SpecResult:
    """What one golden script did."""

    spec: str
    ok: bool
    elapsed_s: float
    errors: list[str]


def load_every_spec(folder: str | Path) -> tuple[list[Spec], list[SpecResult]]:
    """Every spec of ``folder`` that loads, and a failed result for each one that does not.

    Unlike :func:`orharbor.modelling.spec.load_specs`, which stops at the first
    bad file, every file is read, so one run reports every bad spec. A folder
    with no spec files at all is still a SpecError.
    """
    specs, errors = read_specs(folder)
    return specs, [SpecResult(path.stem, False, 0.0, [str(exc)]) for path, exc in errors]


def validate_specs(specs: list[Spec], sandbox: bool = True, jobs: int = 1) -> list[SpecResult]:
    """Run every spec's golden script and compare its outputs with the required ones."""
    if not sandbox:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda s: run_golden(s, None), specs))
    # here, not at the top: the harbor_env package imports Harbor, which sandbox=False never needs
    from orharbor.harbor_env.sandbox import MODELLING_PACKAGES, SOLVER_PACKAGES, require_bwrap

    mirrors = (require_bwrap(), tuple(SOLVER_PACKAGES), tuple(MODELLING_PACKAGES))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: run_golden(s, mirrors), specs))


def run_golden(spec: Spec, sandbox: tuple | None) -> SpecResult:
    """Run one golden script in a fresh /app; ``sandbox`` is (bwrap, solver packages, modelling packages) or None."""
    with tempfile.TemporaryDirectory(prefix=f"orharbor-spec-{spec.id}-") as tmp:
        app = Path(tmp) / "app"
        if spec.template is not None:
            shutil.copytree(spec.template, app)
        else:
            app.mkdir()
        start = time.monotonic()
        try:
            proc = _run(spec, app, Path(tmp), sandbox)
        except subprocess.TimeoutExpired:
            return SpecResult(
                spec.id, False, time.monotonic() - start, [f"golden script ran over its {spec.time_limit_s:g} s"]
            )
        elapsed_s = time.monotonic() - start
        if proc.returncode != 0:
            return SpecResult(
                spec.id,
                False,
                elapsed_s,
                [f"golden script exited with {proc.returncode}: {proc.stderr.strip()[-600:]}"],
            )
        return SpecResult(spec.id, not (errors := compare_outputs(spec, app)), elapsed_s, errors)


def compare_outputs(spec: Spec, app: Path) -> list[str]:
    """Every way the files in ``app`` differ from the spec's required outputs (expected values named)."""
    errors = []
    for name, expected in spec.outputs.items():
        want = expected["text"] if "text" in expected else expected["value"]
        try:
            text = read_text(str(app / name), name)
        except BadOutput as exc:
            errors.append(f"{exc} (expected {want!r})")
            continue
        problem = check_output(text, name, expected)
        if problem:
            errors.append(f"{name}: golden script wrote {text.strip()[:60]!r}, the spec expects {want!r}")
    return errors


def _run(spec: Spec, app: Path, tmp: Path, sandbox: tuple | None) -> subprocess.CompletedProcess:
    if sandbox is None:
        return subprocess.run(
            [sys.executable, str(spec.golden_script)],
            cwd=app,
            capture_output=True,
            text=True,
            timeout=spec.time_limit_s,
        )
    from orharbor.harbor_env.sandbox import run_sandboxed  # as in validate_specs: Harbor only with the sandbox

    bwrap, solver, modelling = sandbox
    solution = tmp / "solution"
    solution.mkdir()
    shutil.copyfile(spec.golden_script, solution / spec.golden_script.name)
    home, logs = tmp / "home", tmp / "logs"
    for folder in (home, logs):
        folder.mkdir()
    for path in (app, home, *app.rglob("*")):
        shutil.chown(path, AGENT_UID, AGENT_UID)
    command = [
        "setpriv",
        f"--reuid={AGENT_UID}",
        f"--regid={AGENT_UID}",
        "--clear-groups",
        "--inh-caps=-all",
        "python3",
        f"/solution/{spec.golden_script.name}",
    ]
    return run_sandboxed(
        bwrap,
        {"/app": app, "/home/agent": home, "/logs": logs},
        {"/solution": solution},
        command,
        spec.time_limit_s,
        solver,
        modelling,
    )
