"""Attack groups: which tasks share a group-scope attack's outcome, and how check runs each such attack once per group.

The grouping tests read real exports; the planning tests replace the trial itself
(``trials._run_trial``) with a recorder that returns chosen rewards, so they need no sandbox.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from bundled import edit_bundled
from click.testing import CliRunner

from orharbor import api, check
from orharbor.check import trials
from orharbor.check.attack_groups import group_key
from orharbor.check.attacks import attack_policies
from orharbor.check.attacks.level2 import PROBES
from orharbor.check.policies import GROUP
from orharbor.check.results import PolicyResult
from orharbor.cli import main
from orharbor.verifiers import contract

LEVEL1_PAIR = ("jobshop-4x4-l1-s0", "jobshop-10x10-l1-s3")
LEVEL2_PAIR = ("jobshop-4x4-l2-s0", "jobshop-10x10-l2-s1")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """Everything shipped in the package, exported as ``orharbor export --out`` does (56 tasks)."""
    out = tmp_path_factory.mktemp("shipped") / "tasks"
    api.export(api.plan_export(out))
    return out


def _key(task: Path) -> str:
    return group_key(task, contract.load(str(task / "tests")))


def _copy(shipped: Path, names: tuple[str, ...], to: Path) -> list[Path]:
    to.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copytree(shipped / name, to / name)) for name in names]


# ------------------------------------------------------------------ the key


def test_tasks_that_differ_in_instance_alone_share_a_key(shipped):
    """Two level-1 job shop tasks (other instance, size, seed, name) and two level-2 ones: one key per pair."""
    for first, second in (LEVEL1_PAIR, LEVEL2_PAIR):
        assert _key(shipped / first) == _key(shipped / second)
    assert _key(shipped / LEVEL1_PAIR[0]) != _key(shipped / LEVEL2_PAIR[0])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}: update this test"
    path.write_text(text.replace(old, new, 1))


def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


#: What an attack can touch, changed in one task of a pair that shares a key: each must split the pair.
SPLITS = {
    "a verifier bundle file": (
        LEVEL1_PAIR,
        lambda t: edit_bundled(
            t / "tests", "orharbor/verifiers/strict.py", "def ", "def _unused():\n    pass\n\n\ndef "
        ),
    ),
    "test.sh": (LEVEL1_PAIR, lambda t: _edit(t / "tests/test.sh", "\n", "\ntrue\n")),
    "the agent's Dockerfile": (LEVEL1_PAIR, lambda t: _edit(t / "environment/Dockerfile", "\n", "\n# and more\n")),
    "a task.toml verifier setting": (
        LEVEL1_PAIR,
        lambda t: _edit(t / "task.toml", "[verifier]\ntimeout_sec = 120.0", "[verifier]\ntimeout_sec = 121.0"),
    ),
    "a level-2 limit in task.json's metadata": (
        LEVEL2_PAIR,
        lambda t: _edit_json(t / "tests/task.json", lambda d: d["metadata"].update(solve_time_limit_s=11.0)),
    ),
    "an unknown file": (LEVEL1_PAIR, lambda t: (t / "tests" / "notes.txt").write_text("x")),
    "an unknown JSON file": (LEVEL1_PAIR, lambda t: (t / "environment" / "extra.json").write_text("{}")),
    "an unknown field in task.json's metadata": (
        LEVEL1_PAIR,
        lambda t: _edit_json(t / "tests/task.json", lambda d: d["metadata"].update(future_limit=1)),
    ),
    "the mode of a tests file": (LEVEL1_PAIR, lambda t: (t / "tests" / "task.json").chmod(0o644)),
}


@pytest.mark.parametrize("what", sorted(SPLITS))
def test_anything_an_attack_can_touch_splits_a_group(shipped, tmp_path, what):
    """Changed in one task of a pair that shares a key, it gives that task another key."""
    pair, change = SPLITS[what]
    kept, changed = _copy(shipped, pair, tmp_path)
    assert _key(kept) == _key(changed)
    change(changed)
    assert _key(kept) != _key(changed)


def test_the_shipped_tasks_fall_into_26_groups(shipped):
    """Level 1: 7 groups of 4 (one per class); level 2: 7 of 2; the 14 specs: 12 (two pairs share their setup)."""
    groups: dict[str, list[str]] = {}
    for task in check.find_tasks(shipped):
        groups.setdefault(_key(task), []).append(task.name)
    assert sum(map(len, groups.values())) == 56 and len(groups) == 26
    sizes = Counter((_level(names[0]), len(names)) for names in groups.values())
    assert sizes == {("l1", 4): 7, ("l2", 2): 7, ("spec", 1): 10, ("spec", 2): 2}
    for names in groups.values():
        assert len({name.split("-")[0] for name in names}) == 1 or _level(names[0]) == "spec", names


def _level(name: str) -> str:
    return "l1" if "-l1-" in name else "l2" if "-l2-" in name else "spec"


def test_each_kind_has_its_group_scope_attacks(shipped):
    """Level 1: all 29 of group scope; level 2: all but deep-folders and other-instance, whose expected reward
    the instance decides; a spec task: its 14 container attacks, and none of its own."""
    scopes = {}
    for name in (LEVEL1_PAIR[0], LEVEL2_PAIR[0], "production_planning_lp"):
        task = shipped / name
        policies = attack_policies(task, contract.load(str(task / "tests")))
        scopes[name] = {p.name for p in policies if p.scope != GROUP}, sum(p.scope == GROUP for p in policies)
    assert scopes[LEVEL1_PAIR[0]] == (set(), 29)
    assert scopes[LEVEL2_PAIR[0]] == ({"deep-folders", "other-instance"}, 14 + len(PROBES) + 2)
    own, group = scopes["production_planning_lp"]
    assert group == 14 and own and "reward-file" not in own


# ------------------------------------------------------------------ the planning of trials


class Recorder:
    """Stands in for ``trials._run_trial``: records each trial and returns its reward (expected unless told)."""

    def __init__(self, rewards: dict[tuple[str, str], float] | None = None):
        self.rewards = rewards or {}
        self.ran: list[tuple[str, str]] = []
        self.events: list[tuple] = []

    async def __call__(self, spec, root, job_dir, job_id, slots, sink, environment=None) -> PolicyResult:
        async with slots.slot(long=spec.long):
            await asyncio.sleep(0.01 if spec.group_scope else 0)
            self.ran.append((spec.task.name, spec.policy))
            self.events.append(("trial", spec.task.name, spec.policy, spec.group_scope))
        reward = self.rewards.get((spec.task.name, spec.policy), spec.expected)
        return PolicyResult(spec.policy, reward, spec.expected, spec.attack, trial_dir=Path(spec.task.name))


@pytest.fixture
def recorded(monkeypatch):
    """check_tasks with a Recorder for trials, on a podman environment no one asks (nothing starts)."""
    monkeypatch.setattr(trials, "preflight", lambda env: None)

    def run(root: Path, rewards=None, **kwargs):
        recorder = Recorder(rewards)
        monkeypatch.setattr(trials, "_run_trial", recorder)
        seen = []

        def on_result(result):
            recorder.events.append(("result", result.task))
            seen.append(result)

        results = check.check_tasks(root, jobs=2, attacks=True, env="podman", on_result=on_result, **kwargs)
        assert sorted(r.task for r in seen) == sorted(r.task for r in results)
        return results, recorder

    return run


#: Three tasks of one group (the first by name, jobshop-10x10-l1-s3, represents it) and one of another.
GROUP_OF_THREE = ("jobshop-10x10-l1-s3", "jobshop-4x4-l1-s0", "jobshop-4x4-l1-s2")
REPRESENTATIVE = GROUP_OF_THREE[0]


@pytest.fixture
def four_tasks(shipped, tmp_path) -> Path:
    _copy(shipped, (*GROUP_OF_THREE, LEVEL2_PAIR[0]), tmp_path / "tasks")
    return tmp_path / "tasks"


def test_group_attacks_run_once_per_group_and_every_member_gets_them(recorded, four_tasks):
    """Each group-scope attack runs on the representative alone; each member reports all its attacks."""
    results, recorder = recorded(four_tasks)
    assert not [k for k, n in Counter(recorder.ran).items() if n > 1]  # no trial twice
    by_task = {r.task: r for r in results}
    ran_on = {task: {policy for t, policy in recorder.ran if t == task} for task in by_task}
    representative = by_task[REPRESENTATIVE]
    group_attacks = {p.policy for p in representative.policies if p.attack and p.ran_on is None}
    assert len(group_attacks) == 29 and ran_on[REPRESENTATIVE] == group_attacks | {"oracle", "naive", "nothing"}
    for member in GROUP_OF_THREE[1:]:
        assert ran_on[member] == {"oracle", "naive", "nothing"}
        shared = [p for p in by_task[member].policies if p.attack]
        assert {p.policy for p in shared} == group_attacks and {p.ran_on for p in shared} == {REPRESENTATIVE}
        assert by_task[member].ok and by_task[member].attack_group == REPRESENTATIVE
    level2 = by_task[LEVEL2_PAIR[0]]
    assert ran_on[level2.task] == {p.policy for p in level2.policies}  # alone in its group: it ran everything
    assert {r.attack_group for r in results} == {REPRESENTATIVE, level2.task}


def test_a_member_reports_only_after_its_representatives_group_trials(recorded, four_tasks):
    """A member's result (and on_result) waits until every group trial of its representative has ended."""
    _, recorder = recorded(four_tasks)
    last_group_trial = max(
        i for i, e in enumerate(recorder.events) if e[0] == "trial" and e[1] == REPRESENTATIVE and e[3]
    )
    for member in GROUP_OF_THREE[1:]:
        assert recorder.events.index(("result", member)) > last_group_trial


def test_a_group_attack_that_wins_on_the_representative_fails_every_member(recorded, four_tasks):
    """One winning trial fails the whole group, and each member's failure names where it ran."""
    results, _ = recorded(four_tasks, rewards={(REPRESENTATIVE, "reward-file"): 1.0})
    by_task = {r.task: r for r in results}
    for name in GROUP_OF_THREE:
        assert not by_task[name].ok and "reward-file scored 1.0" in by_task[name].problem_text()
    for member in GROUP_OF_THREE[1:]:
        assert f"when run on {REPRESENTATIVE}" in by_task[member].problem_text()
    assert "when run on" not in by_task[REPRESENTATIVE].problem_text()
    assert by_task[LEVEL2_PAIR[0]].ok


def test_a_task_that_fails_its_own_checks_represents_no_group(recorded, four_tasks):
    """The first task by name with agent files that differ from tests/ runs nothing; the next one represents."""
    instance = four_tasks / REPRESENTATIVE / "environment" / "instance.json"
    instance.write_text(instance.read_text() + " ")
    results, recorder = recorded(four_tasks)
    by_task = {r.task: r for r in results}
    broken = by_task[REPRESENTATIVE]
    assert broken.error and not broken.policies and not any(t == REPRESENTATIVE for t, _ in recorder.ran)
    deputy = GROUP_OF_THREE[1]
    assert {p.ran_on for p in by_task[deputy].policies} == {None}
    assert {p.ran_on for p in by_task[GROUP_OF_THREE[2]].policies if p.attack} == {deputy}
    assert by_task[deputy].ok and by_task[GROUP_OF_THREE[2]].ok


def test_each_task_runs_every_attack_on_every_task(recorded, four_tasks):
    """attack_groups=False: every policy of every task is a trial of its own, none shared."""
    grouped, grouped_run = recorded(four_tasks)
    results, recorder = recorded(four_tasks, attack_groups=False)
    assert sorted(recorder.ran) == sorted((r.task, p.policy) for r in grouped for p in r.policies)
    assert len(recorder.ran) > len(grouped_run.ran)
    assert all(p.ran_on is None for r in results for p in r.policies)
    assert {r.attack_group for r in results} == {None}


def test_the_attack_table_counts_the_trials_that_ran_and_the_groups(recorded, four_tasks):
    """The table counts trials run, not shared copies; a line names the groups; each task shows all its attacks."""
    results, _ = recorded(four_tasks)
    text = check.format_attacks(results)
    [reward_file] = [line for line in text.splitlines() if line.startswith("reward-file ")]
    assert reward_file.split()[1] == "2/2"  # one trial per group, not one per task
    assert text.splitlines()[-1] == (
        "group attacks ran once per group of tasks with the same images, verifier "
        "and configuration: 2 groups for 4 tasks (--each-task runs them on every task)"
    )
    member = next(r for r in results if r.task == GROUP_OF_THREE[1])
    assert "29/29 held" in check.format_line(member, 30)
    each, _ = recorded(four_tasks, attack_groups=False)
    assert "groups for" not in check.format_attacks(each)


def test_each_task_without_attacks_is_refused():
    """--each-task only changes how --attacks runs: alone it is a usage error, before anything runs."""
    result = CliRunner().invoke(main, ["check", ".", "--each-task"])
    assert result.exit_code == 2 and "--each-task changes how --attacks runs; add --attacks" in result.output
