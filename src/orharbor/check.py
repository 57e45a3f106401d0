"""check: prove every exported task solvable by its reference, without Docker.

For each task, Harbor's trial flow is replayed at the task's real paths
(``/app``, ``/tests``, ``/logs/verifier``, ``/solution``) inside a bubblewrap
sandbox: build the agent's ``/app`` from the Dockerfile's COPY lines, run a
deliverable policy, collect the deliverable as an artifact into a fresh
verifier root (separate mode) or upload ``/tests`` beside it (shared mode),
run ``tests/test.sh`` and read ``/logs/verifier/reward.json``.

Three policies per task: the oracle (``solution/solve.sh``) must score 1.0,
the naive baseline (``solution/naive/``) must score what the reward formula
gives the baseline (0.0 unless naive equals reference), and no deliverable
must score -1.0.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

from orharbor.verifiers.reward import FAIL, mean_reward, reward

POLICIES = ("oracle", "naive", "nothing")
SOLVER_VENV = "/opt/orharbor-solver"
#: Host packages made visible to the sandbox's solver interpreter.
SOLVER_PACKAGES = ("numpy", "scipy")
TOLERANCE = 1e-9


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox here."""


@dataclass
class PolicyResult:
    """Reward one policy earned on one task, and what was expected."""

    policy: str
    reward: float | None
    expected: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.reward is not None and abs(self.reward - self.expected) <= TOLERANCE


@dataclass
class CheckResult:
    """The outcome of checking one task."""

    task: str
    level: int
    mode: str
    policies: list[PolicyResult] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and len(self.policies) == len(POLICIES) and all(p.ok for p in self.policies)

    def problem_text(self) -> str:
        if self.error:
            return self.error
        bad = [p for p in self.policies if not p.ok]
        return "; ".join(f"{p.policy} scored {p.reward} (expected {p.expected:g})"
                         + (f": {p.error}" if p.error else "") for p in bad)


def require_bwrap() -> str:
    """Path of a working bwrap, or a clear error saying how to install it."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable("orharbor check needs bubblewrap (bwrap) for its sandbox; "
                                 "install it with `apt-get install -y bubblewrap` (Debian/Ubuntu) "
                                 "or `dnf install bubblewrap` (Fedora)")
    probe = subprocess.run([path, *_system_binds(), "--proc", "/proc", "--dev", "/dev", "--unshare-pid",
                            "--die-with-parent", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()}")
    return path


def find_tasks(root: Path) -> list[Path]:
    """Task directories under ``root`` (``root`` itself if it is one)."""
    if (root / "task.toml").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/task.toml"))


def check_tasks(root: Path, jobs: int = 1) -> list[CheckResult]:
    """Check every task under ``root`` with ``jobs`` tasks in parallel."""
    bwrap = require_bwrap()
    tasks = find_tasks(root)
    if not tasks:
        raise SandboxUnavailable(f"no task directories (with task.toml) under {root}")
    with tempfile.TemporaryDirectory(prefix="orharbor-check-") as scratch:
        venv = build_solver_venv(Path(scratch) / "solver-venv")
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda t: check_task(t, bwrap, venv), tasks))


def check_task(task: Path, bwrap: str, venv: "SolverVenv") -> CheckResult:
    """Run the three policies on one task."""
    try:
        config = tomllib.loads((task / "task.toml").read_text())
        test_config = json.loads((task / "tests" / "task.json").read_text())
    except (OSError, ValueError) as exc:
        return CheckResult(task.name, 0, "?", error=f"unreadable task: {exc}")
    level = test_config["level"]
    mode = config.get("verifier", {}).get("environment_mode", "shared")
    result = CheckResult(task.name, level, mode)
    for policy in POLICIES:
        expected = expected_reward(policy, test_config)
        try:
            got, error = run_policy(task, policy, config, test_config, bwrap, venv)
        except Exception as exc:  # report, don't crash the whole check
            got, error = None, f"{type(exc).__name__}: {exc}"
        result.policies.append(PolicyResult(policy, got, expected, error))
    return result


def expected_reward(policy: str, test_config: dict) -> float:
    """What a correct verifier must give ``policy`` on this task."""
    if policy == "oracle":
        return 1.0
    if policy == "nothing":
        return FAIL
    if test_config["level"] == 1:
        return reward(test_config["naive"], test_config["naive"], test_config["reference"])
    return mean_reward([reward(c["naive"], c["naive"], c["reference"]) for c in test_config["eval"]])


def run_policy(task: Path, policy: str, config: dict, test_config: dict, bwrap: str,
               venv: "SolverVenv") -> tuple[float | None, str | None]:
    """One trial: agent phase, artifact collection, verifier phase; return the reward."""
    deliverable = test_config["deliverable"]
    separate = config.get("verifier", {}).get("environment_mode", "shared") == "separate"
    with tempfile.TemporaryDirectory(prefix="orharbor-trial-") as tmp:
        agent = Path(tmp) / "agent"
        _make_root(agent)
        populate_app(task / "environment", agent / "app")
        if policy == "oracle":
            shutil.copytree(task / "solution", agent / "solution")
            proc = _sandbox(bwrap, agent, venv, ["bash", "/solution/solve.sh"], extra=("solution",),
                            timeout=float(config.get("agent", {}).get("timeout_sec", 600.0)))
            if proc.returncode != 0:
                return None, f"solve.sh failed ({proc.returncode}): {proc.stderr[-500:]}"
        elif policy == "naive":
            naive = task / "solution" / "naive" / Path(deliverable).name
            shutil.copyfile(naive, agent / deliverable.lstrip("/"))
        if separate:
            verifier = Path(tmp) / "verifier"
            _make_root(verifier)
            (verifier / "app").mkdir(exist_ok=True)
            collect_artifact(agent / deliverable.lstrip("/"), verifier / deliverable.lstrip("/"))
        else:
            verifier = agent
        shutil.copytree(task / "tests", verifier / "tests", dirs_exist_ok=True)
        proc = _sandbox(bwrap, verifier, venv, ["bash", "/tests/test.sh"], extra=("tests",),
                        timeout=float(config.get("verifier", {}).get("timeout_sec", 600.0)))
        reward_file = verifier / "logs" / "verifier" / "reward.json"
        if not reward_file.is_file():
            return None, f"no reward.json (test.sh exit {proc.returncode}): {proc.stdout[-300:]} {proc.stderr[-300:]}"
        value = json.loads(reward_file.read_text()).get("reward")
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, f"reward.json holds no finite reward: {value!r}"
        error = None
        details = verifier / "logs" / "verifier" / "details.json"
        if details.is_file() and policy != "nothing":
            error = first_error(json.loads(details.read_text()))
        return float(value), error


def first_error(details: dict) -> str | None:
    """The verifier's own error, or that of the first failed evaluation instance."""
    if details.get("error"):
        return str(details["error"])
    for row in details.get("instances", []):
        if row.get("error"):
            return f"instance {row.get('index')}: {row['error']} {row.get('stderr_tail', '')[-300:]}".strip()
    return None


def populate_app(environment: Path, app: Path) -> None:
    """Replay the agent Dockerfile's ``COPY src /app/...`` lines into ``app``."""
    for line in (environment / "Dockerfile").read_text().splitlines():
        parts = shlex.split(line) if line.startswith("COPY ") else []
        if len(parts) != 3 or not parts[2].startswith("/app"):
            continue
        source, target = environment / parts[1], app / parts[2][len("/app"):].lstrip("/")
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def collect_artifact(source: Path, target: Path) -> None:
    """Harbor's artifact collection: a regular file is copied; links and specials are skipped."""
    if source.is_symlink() or not source.is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _make_root(root: Path) -> None:
    for sub in ("app", "logs/verifier", "logs/agent", "logs/artifacts"):
        (root / sub).mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True)
class SolverVenv:
    """A venv assembled from host files: the base interpreter plus numpy and scipy only."""

    root: Path
    base_prefix: Path
    python: str
    binds: tuple[tuple[str, str], ...]


def build_solver_venv(root: Path) -> SolverVenv:
    """Lay out a venv for ``/opt/orharbor-solver`` without downloading anything."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = base / "bin" / version
    site = root / "lib" / version / "site-packages"
    (root / "bin").mkdir(parents=True)
    site.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\ninclude-system-site-packages = false\n"
                                     f"version = {sys.version_info.major}.{sys.version_info.minor}."
                                     f"{sys.version_info.micro}\n")
    for name in ("python3", "python", version):
        (root / "bin" / name).symlink_to(python)
    binds = []
    for package in SOLVER_PACKAGES:
        spec = find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(list(spec.submodule_search_locations)[0])
        for path in (folder, folder.parent / f"{package}.libs"):
            if path.is_dir():
                (site / path.name).mkdir()
                binds.append((str(path), f"{SOLVER_VENV}/lib/{version}/site-packages/{path.name}"))
    for folder in (root, *[p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()]):
        folder.chmod(0o755)  # the solver runs as an unprivileged user
    (root / "pyvenv.cfg").chmod(0o644)
    return SolverVenv(root, base, str(python), tuple(binds))


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


def _parents(path: str) -> list[str]:
    """Create ``path``'s ancestors world-traversable (bwrap would make them 0700)."""
    args: list[str] = []
    for parent in reversed(Path(path).parents[:-1]):
        args += ["--perms", "0755", "--dir", str(parent)]
    return args


def _sandbox(bwrap: str, root: Path, venv: SolverVenv, command: list[str],
             extra: tuple[str, ...] = (), timeout: float = 600.0) -> subprocess.CompletedProcess:
    """Run ``command`` as root of a sandbox whose /app and /logs are ``root``'s."""
    args = [bwrap, *_system_binds(), "--tmpfs", "/usr/local", "--dir", "/usr/local/bin",
            *_parents(str(venv.base_prefix)), *_parents(SOLVER_VENV),
            "--ro-bind", str(venv.base_prefix), str(venv.base_prefix),
            "--symlink", venv.python, "/usr/local/bin/python3",
            "--ro-bind", str(venv.root), SOLVER_VENV]
    for source, target in venv.binds:
        args += ["--ro-bind", source, target]
    args += ["--bind", str(root / "app"), "/app", "--bind", str(root / "logs"), "/logs"]
    for name in extra:
        args += ["--bind", str(root / name), f"/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/app",
             "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
             "--new-session", "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
             "--setenv", "HOME", "/root", "--setenv", "LANG", "C.UTF-8", *command]
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def format_table(results: list[CheckResult]) -> str:
    """A fixed-width table: task, level, mode, one column per policy, status."""
    header = ["task", "level", "mode", *POLICIES, "status"]
    rows = [header]
    for r in results:
        cells = [r.task, str(r.level), r.mode]
        by_name = {p.policy: p for p in r.policies}
        for policy in POLICIES:
            p = by_name.get(policy)
            cells.append("-" if p is None or p.reward is None else f"{p.reward:+.3f}")
        cells.append("ok" if r.ok else "FAIL")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)
