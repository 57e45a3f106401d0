"""The attack suite against real exported tasks, and proof that each defence is what stops its attack.

The suite runs on small tasks (smoke size, two hidden instances, 10 s per run) of every
problem class: level 1 in both verifier modes, level 2 in separate mode (and in shared
mode for job shop). The attacks on the container and most level-2 probes do not depend on
the class: they run in full on job shop, and on the other classes only those that do (the
level-1 answers, reading the tests, other instances) and two container attacks. Each
mutation test removes one defence from a copy of the exported verifier and shows that its
attack then gets through: the attack is live, the defence is load-bearing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bundled import edit_bundled

from orharbor import check, problem_modules
from orharbor.check.attacks import level2
from orharbor.check.attacks.level1 import level1_attacks
from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.task_dir import write_manifest
from orharbor.verifiers import contract


#: Every registered class: level 1 in both verifier modes, level 2 in separate mode; job shop also level 2 shared.
SMOKE_TASKS = [
    (name, level, mode)
    for name in problem_modules.names()
    for level, mode in ((1, "separate"), (1, "shared"), (2, "separate"))
] + [("jobshop", 2, "shared")]


@pytest.fixture(scope="module")
def attack_tasks(tmp_path_factory, shipped_rows) -> dict[tuple[str, int, str], Path]:
    """(problem, level, mode) -> a small exported task: smoke size, 2 hidden instances, 10-second runs.

    10 s, the product's default, not less: the oracle, the naive answer and every attack shown to get
    through must finish a Python start in the sandbox within it, which a loaded machine can stretch to
    seconds; the attacks that run until they are stopped (sleep-forever, busy-loop) take that long.
    """
    out = {}
    for problem, level, mode in SMOKE_TASKS:
        smoke = problem_modules.get(problem).SIZES[0]
        row = dict(next(r for r in shipped_rows if (r["problem"], r["level"], r["size"]) == (problem, level, smoke)))
        if level == 2:
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
        folder = tmp_path_factory.mktemp(f"attack-{problem}-l{level}-{mode}")
        out[(problem, level, mode)] = export_row(row, folder, ExportOptions(verifier_mode=mode))
    return out


#: Level-2 probes that depend on the problem class; the rest run on job shop only, to keep CI short.
CLASS_PROBES = ("oracle", "naive", "nothing", "reward-file", "sitecustomize", "read-tests", "other-instance")
#: Of the attacks on the container (the same shell for every class), the ones every class still gets.
CONTAINER_PROBES = ("oracle", "naive", "nothing", "reward-file", "sitecustomize")


def _policies_for(task: Path, problem: str, level: int) -> tuple[str, ...]:
    """Every policy on job shop; elsewhere the class-dependent ones: level-1 answers in full, a few level-2 probes.

    The container attacks (:func:`environment_attacks`) act on the container and
    its log folders, never on the class's verifier, so they run in full on job shop only.
    """
    if problem == "jobshop":
        return ()
    if level == 2:
        return CLASS_PROBES
    return CONTAINER_PROBES + tuple(p.name for p in level1_attacks(task, contract.load(str(task / "tests"))))


@pytest.mark.slow
@pytest.mark.parametrize("problem, level, mode", SMOKE_TASKS)
@pytest.mark.sandbox
def test_every_attack_scores_minus_one_without_crashing_the_verifier(attack_tasks, problem, level, mode):
    """check --attacks: every attack earns exactly -1.0 and the verifier never crashes."""
    task = attack_tasks[(problem, level, mode)]
    only = _policies_for(task, problem, level)
    [result] = check.check_tasks(task, jobs=2, attacks=True, only=only)
    names = {p.policy for p in result.policies if p.attack}
    assert {"reward-file", "sitecustomize"} <= names
    if not only:
        assert {"reward-rewriter", "replace-python"} <= names
    assert (
        {"bool-for-int", "huge-file", "symlink-dev-zero"}
        if level == 1
        else {"read-tests", "other-instance"}
        if only
        else {"fork-bomb", "outlive-run", "read-tests", "import-ortools", "other-instance"}
    ) <= names
    assert result.ok, result.problem_text()


def _mutate(task: Path, tmp_path: Path, edits: list[tuple[str, str, str]]) -> Path:
    """A copy of ``task`` with defences removed: (file under tests/, old text, new text).

    ``../task.toml`` names the task's own task.toml. tests/manifest.json is written
    again afterwards, so the verifier's check of /tests against it does not refuse
    the edited copy: each mutation removes only the defences it names.

    The edit ``UNSEAL`` stands for undoing the export's own sealing of tests/ (owner-only
    modes), the defence that holds even before test.sh runs.
    """
    copy = tmp_path / task.name
    shutil.copytree(task, copy)
    for name, old, new in edits:
        if (name, old, new) == UNSEAL:
            for path in (copy / "tests", *(copy / "tests").rglob("*")):
                path.chmod(0o755 if path.is_dir() or path.suffix == ".sh" else 0o644)
            continue
        if name.startswith("orharbor/"):  # a module of the verifier bundle
            edit_bundled(copy / "tests", name, old, new)
            continue
        path = copy / "tests" / name
        text = path.read_text()
        assert old in text, f"defence {old!r} not found in {name}: update this test"
        path.write_text(text.replace(old, new))
    if (copy / "tests" / "manifest.json").exists():  # the edits are the mutation, not a tampered /tests
        write_manifest(copy / "tests")
    return copy


MAIN, SOLVER, STRICT, SAFE = (
    "orharbor/verifiers/main.py",
    "orharbor/verifiers/solver_run.py",
    "orharbor/verifiers/strict.py",
    "orharbor/verifiers/safe_json.py",
)
NO_FOREIGN_KILL = (
    "orharbor/verifiers/processes.py",
    "    keep = ancestors(os.getpid())\n",
    "    return 0\n    keep = ancestors(os.getpid())\n",
)
#: Shared mode's collect hook, which Harbor runs as root between the agent and the verifier.
NO_COLLECT_HOOK = ("../task.toml", 'command = "for round', 'command = "true" # ')
UNSEAL = ("", "unseal", "")
OPEN_LOGS = (MAIN, "os.chmod(logs_dir, 0o755)", "os.chmod(logs_dir, 0o777)")
PROCESSES, LOCKDOWN = "orharbor/verifiers/processes.py", "orharbor/verifiers/lockdown.py"
#: Processes chosen by state, as before: a zombie-looking thread group is skipped, nothing is killed by uid.
KILL_BY_STATE = [
    (PROCESSES, 'startswith(("Z", "X")) and status.get("Threads", "1").strip() == "1"', 'startswith(("Z", "X"))'),
    (PROCESSES, "    if uid == 0 or os.geteuid() != 0:\n        return\n", "    return\n"),
]
NO_LOCKDOWN = (LOCKDOWN, "        for root in writable_mounts():\n", "        for root in ():\n")
NO_DISK_LIMIT = (SOLVER, "if size > max_bytes or count > limits.max_files:", "if False:")
#: The weakened run of a disk probe must finish its writing (50,000 files, 384 MB) to win, which a loaded machine
#: stretched past the task's 10 s per run: its copy gets 60 s, so what decides is the defence, not the speed.
LONGER_RUNS = ("task.json", '"solve_time_limit_s": 10.0', '"solve_time_limit_s": 60.0')
#: The FIFO at test-stdout.txt blocks Harbor until the verifier timeout: a short one keeps the weakened run short.
SHORT_VERIFIER_TIMEOUT = ("../task.toml", "[verifier]\ntimeout_sec = 120.0\n", "[verifier]\ntimeout_sec = 15.0\n")

MUTATIONS = {
    # attack: (level, mode, edits that remove its defence)
    "bool-for-int": (
        1,
        "separate",
        [(STRICT, "if isinstance(value, bool) or not isinstance(value, int):", "if not isinstance(value, int):")],
    ),
    "duplicate-keys": (1, "separate", [(SAFE, "object_pairs_hook=_no_duplicates,", "")]),
    "reward-rewriter": (1, "shared", [NO_COLLECT_HOOK, NO_FOREIGN_KILL, OPEN_LOGS]),
    "write-reward": (2, "separate", [OPEN_LOGS, NO_LOCKDOWN]),
    "outlive-run": (2, "separate", [(SOLVER, "                _kill_uid(uid)\n", "")]),
    "cache-across-runs": (2, "separate", [(SOLVER, "        remove_files_of(uid, open_dirs)  #", "        None  #")]),
    "read-tests": (
        2,
        "separate",
        [
            ("test.sh", "chmod -R go-rwx /tests 2>/dev/null", "true"),
            UNSEAL,
            ("Dockerfile", " && chmod -R go-rwx /tests", ""),
        ],
    ),
    "memory-hog": (2, "separate", [(SOLVER, "        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n", "")]),
    # issue 12, one per class of defect
    "zombie-rewriter": (1, "shared", [NO_COLLECT_HOOK, OPEN_LOGS, *KILL_BY_STATE]),
    "zombie-solver": (2, "shared", [NO_COLLECT_HOOK, *KILL_BY_STATE]),
    "deep-folders": (
        2,
        "separate",
        [
            (
                SOLVER,
                "        remove_path(workdir)\n",
                "        __import__('shutil').rmtree(workdir, ignore_errors=True)\n",
            )
        ],
    ),
    "nested-cache": (2, "shared", [NO_LOCKDOWN]),
    "disk-total": (2, "separate", [NO_DISK_LIMIT, LONGER_RUNS]),
    "many-files": (2, "separate", [NO_DISK_LIMIT, LONGER_RUNS]),
    "ortools-syspath": (2, "shared", [NO_LOCKDOWN]),
    # Harbor's own redirect to /logs/verifier/test-stdout.txt, before test.sh: only the collect hook helps
    "stdout-dir": (1, "shared", [NO_COLLECT_HOOK]),
    "stdout-fifo": (1, "shared", [NO_COLLECT_HOOK, SHORT_VERIFIER_TIMEOUT]),
    "stdout-symlink": (1, "shared", [NO_COLLECT_HOOK]),
    # Harbor's host-side copy into the verifier (tarfile.add, recursive): the collect hook bounds what
    # reaches it; the bubblewrap environment's own download limits are raised (see HOOK_ALONE)
    "deep-artifacts": (1, "separate", [NO_COLLECT_HOOK]),
    "artifact-chain": (1, "separate", [NO_COLLECT_HOOK]),
    "artifact-chain-l2": (2, "separate", [NO_COLLECT_HOOK]),  # the same attack on level 2's /app/solve.py
}
#: Attacks the collect hook must hold on its own, as on Docker: the bubblewrap environment's download
#: limits (harbor_env/transfer.py) are raised for both the defended and the weakened run.
HOOK_ALONE = {"deep-artifacts", "artifact-chain", "artifact-chain-l2"}


#: The limits of the bubblewrap environment's downloads (harbor_env/transfer.py); Docker has none.
TRANSFER_LIMITS = ("MAX_DEPTH", "MAX_ENTRIES", "MAX_BYTES", "MAX_FILE_SIZE")


def _without_transfer_limits(monkeypatch) -> None:
    """Raise the bubblewrap environment's transfer limits, so a tree reaches Harbor's host-side copy as on Docker."""
    from orharbor.harbor_env import environment

    for name in TRANSFER_LIMITS:
        if hasattr(environment.transfer, name):
            monkeypatch.setattr(environment.transfer, name, 10**12)


@pytest.mark.parametrize("attack", sorted(MUTATIONS))
@pytest.mark.sandbox
def test_removing_the_defence_lets_the_attack_through(attack_tasks, tmp_path, monkeypatch, attack):
    """With its defence removed from the verifier, the attack gets through: a higher reward, or a crash.

    Some attacks race the verifier or Harbor (a rewriter against Harbor's read of
    the reward, a daemon's heartbeat between two runs) and can lose a round by
    timing alone, about one full suite in two on this machine: the weakened task
    gets three tries, and the attack must win one. The defended task must hold
    on its one try.
    """
    level, mode, edits = MUTATIONS[attack]
    task = attack_tasks[("jobshop", level, mode)]
    if attack in HOOK_ALONE:
        _without_transfer_limits(monkeypatch)
    attack = attack.removesuffix("-l2")
    defended = check.check_tasks(task, jobs=2, attacks=True, only=(attack,))[0]
    assert [p.policy for p in defended.policies] == [attack] and defended.ok, defended.problem_text()
    weakened = _mutate(task, tmp_path, edits)
    outcomes = []
    for _ in range(3):
        [result] = check.check_tasks(weakened, jobs=2, attacks=True, only=(attack,))
        [outcome] = result.policies
        outcomes.append(outcome)
        if not outcome.ok:
            break
    assert not outcomes[-1].ok, outcomes


def test_every_level2_probe_is_a_valid_program_with_a_hook():
    """Each probe is a file that defines capability(), the hook its gate calls before the naive answer."""
    for name, description in level2.PROBES.items():
        source = level2.probe_source(name)
        compile(source + level2.GATE, name, "exec")
        assert "def capability()" in source and description
        assert name == name.lower()


@pytest.mark.slow
def test_the_probes_that_wait_out_a_limit_try_on_the_first_hidden_instance_only(tmp_path, shipped_rows):
    """sleep-forever, busy-loop, fork-bomb and many-files call capability() only when handed the first hidden
    instance, keyed as the lookup program keys its answers; elsewhere (the public example, the other hidden
    instances) they answer nothing at once. Only harmless programs run here: a probe that records its call, and
    sleep-forever."""
    import json
    import subprocess
    import sys

    from orharbor.exporter.algorithm import lookup_program

    row = next(r for r in shipped_rows if (r["problem"], r["level"]) == ("jobshop", 2))
    task_dir = export_row(row, tmp_path / "tasks", ExportOptions())
    task = contract.load(str(task_dir / "tests"))
    tests = task_dir / "tests"
    first, *others = [tests / case.instance for case in task.cases]
    elsewhere = (tests / task.example.instance, *others)
    assert others, "a task with one hidden instance tests nothing here"
    naive = json.loads((task_dir / "solution" / "naive_answers.json").read_text())
    gate = level2.first_hidden_gate(task)
    programs = {p.name: p.files.get("solve.py") for p in level2.level2_attacks(task_dir, task)}
    for name in level2.ON_FIRST_HIDDEN:
        assert programs[name] == (level2.probe_source(name) + gate + lookup_program(naive)).encode()
    scratch = tmp_path / "run"
    scratch.mkdir()

    def run(program: str, instance: Path, timeout: float) -> subprocess.CompletedProcess:
        (scratch / "solve.py").write_text(program)
        for made in ("solution.json", "called"):
            (scratch / made).unlink(missing_ok=True)
        return subprocess.run(
            [sys.executable, "-I", "solve.py", str(instance), "solution.json"],
            cwd=scratch,
            capture_output=True,
            timeout=timeout,
        )

    recording = "def capability():\n    open('called', 'w').close()\n    return True\n" + gate + lookup_program(naive)
    for instance in elsewhere:
        done = run(recording, instance, timeout=30)
        assert done.returncode == 0 and not (scratch / "called").exists(), (instance, done.stderr)
        assert not (scratch / "solution.json").exists()
    assert run(recording, first, timeout=30).returncode == 0 and (scratch / "called").exists()
    assert json.loads((scratch / "solution.json").read_text()) == naive[task.cases[0].instance_sha256]
    sleep_forever = programs["sleep-forever"].decode()
    for instance in elsewhere:
        assert run(sleep_forever, instance, timeout=30).returncode == 0
    with pytest.raises(subprocess.TimeoutExpired):
        run(sleep_forever, first, timeout=3)
