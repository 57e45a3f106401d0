"""The attack suite: what a reward-hacking policy would try, as check policies.

Every attack must earn at most the failure reward of its task's kind (-1.0,
or 0.0 in modelling tasks) and must not crash the verifier; two level-2
attacks expect what an honest answer earns instead (``deep-folders``,
``other-instance``). The environment attacks (:mod:`.environment`) apply to
every task; the others to one kind each (:mod:`.level1`, :mod:`.level2`,
:mod:`.spec`, :mod:`.retail`). The Python they hand in is in ``probes/``.

An attack of group scope (``Policy.scope``: the environment attacks, the
level-1 answers, most level-2 probes) hands in nothing whose fate depends on
the instance; ``orharbor check`` runs it once per group of tasks that share
their images, verifier and configuration (:mod:`orharbor.check.attack_groups`).

Used by ``orharbor check --attacks`` for every problem class alike.
"""

from __future__ import annotations

from pathlib import Path

from orharbor.check.attacks.environment import environment_attacks
from orharbor.check.attacks.level1 import level1_attacks
from orharbor.check.attacks.level2 import level2_attacks
from orharbor.check.attacks.retail import retail_attacks
from orharbor.check.attacks.spec import spec_attacks
from orharbor.check.policies import Policy
from orharbor.verifiers.contract import Level1Task, Level2Task, RetailTask, SpecTask, Task

__all__ = ["attack_policies"]


def attack_policies(task_dir: Path, task: Task) -> list[Policy]:
    """Every attack on the task in ``task_dir`` (its contract ``task``): the environment's, then its kind's."""
    match task:
        case Level1Task():
            own = level1_attacks(task_dir, task)
        case Level2Task():
            own = level2_attacks(task_dir, task)
        case SpecTask():
            own = spec_attacks(task)
        case RetailTask():
            own = retail_attacks(task)
        case _:
            raise ValueError(f"{task_dir.name}: no attacks for a {task.KIND} task")
    return environment_attacks(task.kind.fail_reward, task.deliverables) + own
