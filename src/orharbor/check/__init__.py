"""check: prove every exported task solvable by its reference, through Harbor's own trial code.

Each task runs as real Harbor trials (``Trial.create(...).run()``) on any
Harbor environment (:mod:`orharbor.check.environment`: ``--env docker``,
``podman``, a cloud provider or an import path), by default docker when a
Docker daemon answers, else :class:`orharbor.harbor_env.BubblewrapEnvironment`
(the sandbox of :mod:`orharbor.harbor_env.sandbox`), at the task's real paths, in whichever
verifier mode its task.toml asks for. A task whose ``environment/`` differs
from what its ``tests/`` grades with (:mod:`orharbor.exporter.agent_files`)
fails at once, without trials. Each policy must earn what the task
contract says (``task.policies``), here on orharbor's reward scale (on the
``unit`` scale of ``export --reward-scale unit``: oracle 1.0, naive 0.5 in
algorithm tasks, nothing and every attack 0.0):

- Harbor's ``oracle`` agent (``solution/solve.sh``) must score 1.0;
- :class:`orharbor.check.agents.NaiveAgent` (``solution/naive/``) must score 0.0;
- Harbor's ``nop`` agent (no answer) the kind's failure reward: -1.0, or 0.0 in modelling tasks;
- with ``attacks=True``, every attack of :mod:`orharbor.check.attacks`, acted out by
  :class:`orharbor.check.agents.PolicyAgent`, no more than the failure reward,
  without crashing the verifier.

A reward is read from Harbor's own trial result (:mod:`orharbor.check.results`),
and ``reward.json`` must hold the one key ``reward``. The trials go in one
Harbor job folder (trial folders, ``config.json``, ``result.json`` with
Harbor's own metrics, :mod:`orharbor.check.jobfolder`), kept when a jobs
folder is given. :mod:`orharbor.check.trials` drives the trials and
:mod:`orharbor.check.output` prints what they found.
"""

from __future__ import annotations

from orharbor.check.environment import CheckEnvironment, UnknownEnvironment, resolve_environment
from orharbor.check.output import format_attacks, format_header, format_line
from orharbor.check.results import CheckResult, PolicyResult
from orharbor.check.trials import check_tasks, find_tasks
from orharbor.harbor_env.sandbox import SandboxUnavailable

__all__ = [
    "CheckEnvironment",
    "UnknownEnvironment",
    "resolve_environment",
    "CheckResult",
    "PolicyResult",
    "SandboxUnavailable",
    "check_tasks",
    "find_tasks",
    "format_attacks",
    "format_header",
    "format_line",
]
