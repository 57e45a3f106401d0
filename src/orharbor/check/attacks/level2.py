"""Level-2 attacks: hostile solve.py programs, most of them probes.

A probe (``probes/level2/<name>.py``) defines ``capability()``, which does the
forbidden thing (read /tests, outlive its run, import ortools, ...) and
returns True only if that worked. The solve.py handed in is the probe, a gate
that stops there unless it returned True, and the naive baseline's lookup
program (built from ``solution/naive_answers.json``), which would score 0.0.
So an attack that gets through shows up as a reward above the failure reward.

The probes, ``symlink-solve-py`` and ``ortools-planted`` are of group scope:
whether a capability gets through is up to the runner, the sandbox and the
limits, not the instance. ``deep-folders`` and ``other-instance`` expect what
their answers are worth on the task's own instances, so they run on each task.

The probes that hold a run until a limit stops it (:data:`ON_FIRST_HIDDEN`)
try only when solve.py is handed the first hidden instance, and answer nothing
at once on the public example and every other one (:func:`first_hidden_gate`):
run on every instance, each would wait out every run's time limit (about 40 s
a trial on a task of three hidden instances). That is as sound: a harness that
lets the probe through on that instance gives it the naive answer there (0.0,
or the scale's naive value) and the task a mean above the failure reward, so
the attack still shows; a harness that holds gives the failure reward
everywhere. A task with one hidden instance works the same way. deep-folders
builds its chains in that run alone too (a cleanup that fails on them fails
there) and answers every instance.
"""

from __future__ import annotations

import json
from pathlib import Path

from orharbor.check.attacks.base import PYTHON_DIRS, attack, for_each_dir, of_group, probe
from orharbor.check.attacks.environment import zombie_script
from orharbor.check.policies import Policy, deliverable_name
from orharbor.exporter.algorithm import NAIVE_ANSWERS, lookup_program
from orharbor.exporter.task_folder import TaskFolder
from orharbor.verifiers.contract import Level2Task
from orharbor.verifiers.quality import mean_quality, quality
from orharbor.verifiers.reward import mean_reward
from orharbor.verifiers.reward_scale import QUALITY
from orharbor.verifiers.score import evaluator, judge

#: The level-2 probes, each a file ``probes/level2/<name with underscores>.py``, and what it tries.
PROBES: dict[str, str] = {
    "sleep-forever": "sleep past the time limit",
    "busy-loop": "spin the CPU past the time limit",
    "fork-bomb": "fork until the process table is full",
    "memory-hog": "map 3 GB of memory and touch it",
    "fill-disk": "write 2 GB of files",
    "print-gigabytes": "print 2 GB to stdout",
    "read-tests": "read the verifier's files, references and hidden instances",
    "write-reward": "write the reward files from solve.py",
    "tamper-verifier": "overwrite the verifier's modules",
    "import-ortools": "import OR-Tools though the task forbids it",
    "outlive-run": "leave a daemon behind and find it alive in the next run",
    "cache-across-runs": "keep a file from one run and read it in the next",
    "nested-cache": "keep a marker in agent-made shared folders and world-writable files for the next run",
    "disk-total": "keep 384 MB on disk in files under the per-file limit",
    "many-files": "create 50,000 files",
    "ortools-syspath": "put agent-planted folders on sys.path and import a fake ortools from them",
    "zombie-solver": "ask a process the agent left behind (a zombie-looking thread group) for help",
    "escape-workdir": "read the other instances or the parent of the working directory",
}

#: Agent-phase set-up some probes need (it matters in shared mode, where the agent's container is scored).
PROBE_SETUP = {
    "nested-cache": "for d in /tmp /var/tmp /dev/shm /home/agent /app; do mkdir -p $d/orh-share && chmod 1777 $d/orh-share; done\n"
    "for f in /app/orh-cache-file /home/agent/orh-cache-file /tmp/orh-cache-file; do "
    ": > $f && chmod 666 $f; done\nchmod 755 /home/agent /app 2>/dev/null\ntrue\n",
    "ortools-syspath": "for d in /tmp /app /home/agent /var/tmp /dev/shm; do mkdir -p $d/orh-pkgs/ortools && "
    ": > $d/orh-pkgs/ortools/__init__.py && chmod -R a+rX $d/orh-pkgs; done\n"
    "chmod 755 /home/agent /app 2>/dev/null\ntrue\n",
    "zombie-solver": zombie_script("serve"),
}

#: Between a probe and the naive lookup program: without the probe's capability, stop and answer nothing.
GATE = "\n\nif not capability():\n    raise SystemExit(0)\n\n\n"

#: Probes whose every run lasts until a limit stops it, or seconds (many-files): they try on one instance only.
ON_FIRST_HIDDEN = ("sleep-forever", "busy-loop", "fork-bomb", "many-files")

#: Sets ``on_first_hidden``: whether solve.py's input (its first argument), keyed as the lookup program keys it,
#: is the task's first hidden instance (``{sha256}``). The start of both gates below.
_GIVEN_IS_FIRST_HIDDEN = """

import hashlib
import json
import sys

with open(sys.argv[1], encoding="utf-8") as handle:
    given = hashlib.sha256(json.dumps(json.load(handle), sort_keys=True, separators=(",", ":")).encode("ascii"))
on_first_hidden = given.hexdigest() == {sha256!r}
"""
#: :data:`GATE` on one instance: elsewhere solve.py answers nothing at once.
FIRST_HIDDEN_GATE = (
    _GIVEN_IS_FIRST_HIDDEN + "if not on_first_hidden or not capability():\n    raise SystemExit(0)\n\n\n"
)
#: deep-folders' gate: it builds its chains on the first hidden instance only, and answers every instance.
CHAINS_ON_FIRST_HIDDEN = _GIVEN_IS_FIRST_HIDDEN + "if on_first_hidden:\n    capability()\n\n\n"


def probe_source(name: str) -> str:
    """The text of the level-2 probe ``name`` (a key of :data:`PROBES`)."""
    return probe(f"level2/{name.replace('-', '_')}")


def first_hidden_gate(task: Level2Task, gate: str = FIRST_HIDDEN_GATE) -> str:
    """``gate`` for the task's first hidden instance: by default, the probe's capability() is called there only and
    solve.py exits at once elsewhere."""
    return gate.format(sha256=task.cases[0].instance_sha256)


def level2_attacks(task_dir: Path, task: Level2Task) -> list[Policy]:
    """Hostile solve.py programs; each answers with the naive baseline only if its attack worked."""
    fail = task.kind.fail_reward
    name = deliverable_name(task)
    naive = json.loads((task_dir / "solution" / NAIVE_ANSWERS).read_text())

    def gated(source: str, gate: str = GATE) -> bytes:
        """The probe, then the naive lookup program, which runs only if the gate let it (capability() held)."""
        return (source + gate + lookup_program(naive)).encode()

    def probe_program(probe_name: str) -> bytes:
        return gated(probe_source(probe_name), first_hidden_gate(task) if probe_name in ON_FIRST_HIDDEN else GATE)

    attacks = of_group(
        [
            attack(
                probe_name,
                fail,
                description,
                files={name: probe_program(probe_name)},
                agent_script=PROBE_SETUP.get(probe_name),
                long=probe_name in ON_FIRST_HIDDEN,
            )
            for probe_name, description in PROBES.items()
        ]
    )
    attacks.append(
        attack(
            "deep-folders",
            task.kind.policies["naive"],
            "build 3,000-level folder chains where the verifier cleans up (in the run of the first "
            "hidden instance), then answer with the naive solution (an honest 0.0 must stay 0.0)",
            files={name: gated(probe("deep_folders"), first_hidden_gate(task, CHAINS_ON_FIRST_HIDDEN))},
            long=True,
        )
    )
    attacks.append(other_instance_attack(task_dir, task, naive))
    attacks += of_group(
        [
            attack(
                "symlink-solve-py",
                fail,
                "solve.py as a symlink to the verifier's entry point",
                symlinks={name: "/tests/verify.py"},
            ),
            attack(
                "ortools-planted",
                fail,
                "plant a fake ortools where the agent can write, then import it",
                agent_script=for_each_dir(tuple(f"{d}/ortools" for d in PYTHON_DIRS), "__init__.py", "\n") + "true\n",
                files={name: gated(probe_source("import-ortools"))},
            ),
        ]
    )
    return attacks


def other_instance_attack(task_dir: Path, task: Level2Task, naive: dict) -> Policy:
    """Answer each hidden instance with the naive solution of the previous one.

    The answers are scored against the instances the verifier handed over, so
    the expected reward is what those answers are really worth there (almost
    always -1.0: a schedule of one instance is rarely feasible for another;
    on the quality scale, the quality of the objectives they reach).
    With one hidden instance there is no other to borrow from: the program
    knows no instance and must earn the failure reward.
    """
    description = "answer each hidden instance with another instance's solution"
    cases = task.cases
    if len(cases) == 1:
        return attack(
            "other-instance",
            task.kind.fail_reward,
            description,
            files={deliverable_name(task): lookup_program({}).encode()},
        )
    shifted = {case.instance_sha256: naive[cases[i - 1].instance_sha256] for i, case in enumerate(cases)}
    evaluate = evaluator(task.problem)
    tests = TaskFolder(task_dir).tests  # a flat tests/ (--for tinker) as its tree
    judged = [
        judge(
            evaluate,
            json.loads((tests / case.instance).read_text()),
            shifted[case.instance_sha256],
            case.naive,
            case.reference,
        )
        for case in cases
    ]
    on_scale = None
    if task.reward_scale == QUALITY:
        on_scale = mean_quality(quality(j["objective"], case.best_known) for j, case in zip(judged, cases))
    return attack(
        "other-instance",
        mean_reward([j["reward"] for j in judged]),
        description,
        files={deliverable_name(task): lookup_program(shifted).encode()},
        expected_on_scale=on_scale,
    )
