"""The report's tables as lists of dicts with stable keys (see docs/report.md).

Rates and means are over the *scored* trials of a group: those Harbor holds a
valid reward for (its own metrics leave the others out too). Every trial still
counts in ``trials``, and the exception types of all of them in ``errors``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from statistics import fmean, pstdev

from orharbor import problem_modules
from orharbor.report.jobs import TrialRecord
from orharbor.report.stats import best_of_k, bootstrap_ci, paired_test, pass_at_k

#: A reward this far above 1.0 beats the reference; this far above 0.0 beats naive.
EPS = 1e-9

#: What a group's trials cost, from what the agents reported to Harbor (see :func:`usage`).
USAGE_KEYS = (
    "input_tokens",
    "cache_tokens",
    "output_tokens",
    "costed",
    "cost_usd",
    "cost_per_trial",
    "reward_per_dollar",
    "cost_of_pass",
    "unscored_cost_usd",
)
ALGORITHM_KEYS = (
    "agent",
    "model",
    "kind",
    "problem",
    "size",
    "level",
    "trials",
    "scored",
    "mean_reward",
    "ci_low",
    "ci_high",
    "feasible_rate",
    "beat_reference_rate",
    "at_or_below_naive_rate",
    "errors",
    "timeouts",
    "solver_timeouts",
    "gap_reference",
    "gap_bound",
    "gap_best",
    "quality",
    "instance_std",
    "instance_min",
    "instance_max",
    "best_of_k",
    "cpu_factor",
    *USAGE_KEYS,
)
MODELLING_KEYS = (
    "agent",
    "model",
    "kind",
    "source",
    "difficulty",
    "family",
    "trials",
    "scored",
    "execution_rate",
    "accuracy",
    "silent_failure_rate",
    "mean_reward",
    "ci_low",
    "ci_high",
    "pass_at_k",
    "errors",
    *USAGE_KEYS,
)
COMPARE_KEYS = (
    "kind",
    "problem",
    "size",
    "level",
    "family",
    "a_trials",
    "b_trials",
    "a_mean",
    "b_mean",
    "difference",
    "shared_tasks",
    "paired_difference",
    "ci_low",
    "ci_high",
    "p_value",
)


def size_order(problem: str, size: str | None) -> tuple:
    """Sort key of a size: its place in the problem module's SIZES, then by name."""
    try:
        sizes = list(problem_modules.get(problem).SIZES)
    except problem_modules.UnknownProblem:
        sizes = []
    return (sizes.index(size) if size in sizes else len(sizes), str(size))


def algorithm_rows(trials: list[TrialRecord]) -> list[dict]:
    """One row per agent (and model) x problem x size x level."""
    groups: dict[tuple, list[TrialRecord]] = defaultdict(list)
    for t in trials:
        if t.kind == "algorithm":
            groups[(t.agent, t.model or "", t.problem, t.size, t.level)].append(t)
    keys = sorted(groups, key=lambda k: (k[2], size_order(k[2], k[3]), k[4] or 0, k[0], k[1]))
    return [_algorithm_row(groups[k]) for k in keys]


def _algorithm_row(group: list[TrialRecord]) -> dict:
    first = group[0]
    scored = [t for t in group if t.scored]
    rewards = [t.score for t in scored]
    interval = bootstrap_ci(rewards)
    instance_rewards = [i.reward for t in scored for i in t.instances]
    return {
        "agent": first.agent,
        "model": first.model,
        "kind": "algorithm",
        "problem": first.problem,
        "size": first.size,
        "level": first.level,
        "trials": len(group),
        "scored": len(scored),
        "mean_reward": fmean(rewards) if rewards else None,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
        "feasible_rate": _rate([t.feasible for t in scored]),
        "beat_reference_rate": _rate([r > 1.0 + EPS for r in rewards]),
        "at_or_below_naive_rate": _rate([r <= EPS for r in rewards]),
        "errors": _errors(group),
        "timeouts": sum(1 for t in group if t.exception and t.exception.endswith("TimeoutError")),
        "solver_timeouts": sum(i.timed_out for t in scored for i in t.instances),
        "gap_reference": _mean_of(trial_gap(t, "reference") for t in scored),
        "gap_bound": _mean_of(trial_gap(t, "bound") for t in scored),
        "gap_best": _mean_of(trial_gap(t, "best_known") for t in scored),
        "quality": _mean_of(t.quality for t in scored),
        "instance_std": pstdev(instance_rewards) if len(instance_rewards) > 1 else None,
        "instance_min": min(instance_rewards) if instance_rewards else None,
        "instance_max": max(instance_rewards) if instance_rewards else None,
        "best_of_k": _best_of_k(scored),
        "cpu_factor": _mean_of(t.cpu_factor for t in group if t.level == 2),
        **usage(group),
    }


def usage(group: list[TrialRecord]) -> dict:
    """What a group's trials cost, kept apart by whether Harbor scored them.

    Over the scored trials whose agent reported a cost (``costed``): the total
    (``cost_usd``), the mean per trial, the mean reward per dollar (mean reward /
    mean cost per trial), and the cost of a pass (mean cost per trial / the
    fraction that reached a reward of 1.0: the reference matched or beaten, or
    a modelling answer correct; Erol et al.'s cost-of-pass), None when none
    reached it. Tokens are means per scored trial that reported them. A trial
    Harbor holds no valid reward for (an infrastructure failure, which its own
    metrics leave out) counts only in ``unscored_cost_usd``, so what the
    infrastructure wasted never lowers an agent's reward per dollar.
    """
    scored = [t for t in group if t.scored]
    costed = [t for t in scored if t.cost_usd is not None]
    costs = [t.cost_usd for t in costed if t.cost_usd is not None]
    per_trial = fmean(costs) if costed else None
    passed = _rate([t.score >= 1.0 - EPS for t in costed])
    unscored = [t.cost_usd for t in group if not t.scored and t.cost_usd is not None]
    return {
        "input_tokens": _mean_of(t.input_tokens for t in scored),
        "cache_tokens": _mean_of(t.cache_tokens for t in scored),
        "output_tokens": _mean_of(t.output_tokens for t in scored),
        "costed": len(costed),
        "cost_usd": math.fsum(costs) if costed else None,
        "cost_per_trial": per_trial,
        "reward_per_dollar": fmean(t.score for t in costed) / per_trial if per_trial else None,
        "cost_of_pass": per_trial / passed if per_trial is not None and passed else None,
        "unscored_cost_usd": math.fsum(unscored) if unscored else None,
    }


def _best_of_k(scored: list[TrialRecord]) -> dict[int, float]:
    """Expected best reward of k tries per task, averaged over the group's tasks (pass@k for a reward that is not
    0 or 1); none until every task has two scored trials."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for t in scored:
        by_task[t.task].append(t.score)
    return best_of_k(by_task) if by_task and min(map(len, by_task.values())) > 1 else {}


def relative_gap(objective: float | None, target: float | None, to: str = "reference") -> float | None:
    """How far above a target a minimised objective is, as a fraction.

    To the reference, the deviation from the best known value used across the
    field: (objective - reference) / max(|reference|, 1). To the bound, the
    optimality gap as MIP and CP-SAT solvers report it: (objective - bound) /
    max(|objective|, 1), which stays at most 1 for a positive objective even
    when the bound is weak (near 0). To the best known value of the instance
    (``best_known``), as to the reference: the field's usual gap to the BKS.
    """
    if objective is None or target is None:
        return None
    scale = objective if to == "bound" else target
    return (objective - target) / max(abs(scale), 1.0)


def trial_gap(t: TrialRecord, to: str) -> float | None:
    """Gap of a feasible answer to the reference, the bound or the best known value; a level-2 trial's mean over
    its feasible instances."""
    if t.instances:
        return _mean_of(relative_gap(i.objective, getattr(i, to), to) for i in t.instances if i.feasible)
    if not t.feasible:
        return None
    return relative_gap(t.objective, getattr(t, to), to)


def modelling_rows(trials: list[TrialRecord], by: str) -> list[dict]:
    """One row per agent (and model) x source x ``by`` (``difficulty`` or ``family``)."""
    groups: dict[tuple, list[TrialRecord]] = defaultdict(list)
    for t in trials:
        if t.kind == "modelling":
            groups[(t.agent, t.model or "", t.problem, getattr(t, by) or "-")].append(t)
    rows = []
    for key in sorted(groups, key=lambda k: (k[2], k[3], k[0], k[1])):
        group = groups[key]
        scored = [t for t in group if t.scored]
        rewards = [t.score for t in scored]
        interval = bootstrap_ci(rewards)
        successes: dict[str, list[bool]] = defaultdict(list)
        for t in scored:
            successes[t.task].append(bool(t.correct))
        rows.append(
            {
                "agent": group[0].agent,
                "model": group[0].model,
                "kind": "modelling",
                "source": key[2],
                "difficulty": key[3] if by == "difficulty" else None,
                "family": key[3] if by == "family" else None,
                "trials": len(group),
                "scored": len(scored),
                "execution_rate": _rate([t.executed for t in scored]),
                "accuracy": _rate([t.correct for t in scored]),
                "silent_failure_rate": _rate(
                    [None if t.executed is None or t.correct is None else t.executed and not t.correct for t in scored]
                ),
                "mean_reward": fmean(rewards) if rewards else None,
                "ci_low": interval[0] if interval else None,
                "ci_high": interval[1] if interval else None,
                "pass_at_k": pass_at_k(successes) if successes and min(map(len, successes.values())) > 1 else {},
                "errors": _errors(group),
                **usage(group),
            }
        )
    return rows


def compare_rows(a: list[TrialRecord], b: list[TrialRecord]) -> list[dict]:
    """Per problem x size x level (algorithm) and per modelling family: job B against job A.

    ``difference`` is B's mean minus A's over all their scored trials; the
    paired figures are over the tasks both scored (each task's mean reward
    in B minus that in A), with a bootstrap interval and the Wilcoxon
    signed-rank p-value. The first rows (``problem`` "all") pool every task
    of a kind.
    """

    def key(t: TrialRecord) -> tuple:
        return (t.kind, t.problem, t.size, t.level, t.family if t.kind == "modelling" else None)

    keys = {key(t) for t in a + b}
    kinds = sorted({k[0] for k in keys})
    ordered = [(kind, "all", None, None, None) for kind in kinds]
    ordered += sorted(keys, key=lambda k: (k[0], k[1], size_order(k[1], k[2]), k[3] or 0, k[4] or ""))
    rows = []
    for k in ordered:

        def member(t: TrialRecord) -> bool:
            return t.kind == k[0] and (k[1] == "all" or key(t) == k)

        rows.append(_compare_row(k, [t for t in a if member(t)], [t for t in b if member(t)]))
    return rows


def _compare_row(k: tuple, a: list[TrialRecord], b: list[TrialRecord]) -> dict:
    a_mean, b_mean = _mean_of(t.reward for t in a), _mean_of(t.reward for t in b)
    a_tasks, b_tasks = _task_means(a), _task_means(b)
    shared = sorted(set(a_tasks) & set(b_tasks))
    diffs = [b_tasks[task] - a_tasks[task] for task in shared]
    interval = bootstrap_ci(diffs)
    return {
        "kind": k[0],
        "problem": k[1],
        "size": k[2],
        "level": k[3],
        "family": k[4],
        "a_trials": len(a),
        "b_trials": len(b),
        "a_mean": a_mean,
        "b_mean": b_mean,
        "difference": b_mean - a_mean if a_mean is not None and b_mean is not None else None,
        "shared_tasks": len(shared),
        "paired_difference": fmean(diffs) if diffs else None,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
        "p_value": paired_test(diffs),
    }


def _task_means(trials: list[TrialRecord]) -> dict[str, float]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for t in trials:
        if t.scored:
            by_task[t.task].append(t.score)
    return {task: fmean(values) for task, values in by_task.items()}


def _rate(flags) -> float | None:
    known = [f for f in flags if f is not None]
    return sum(map(bool, known)) / len(known) if known else None


def _mean_of(values) -> float | None:
    known = [v for v in values if v is not None and math.isfinite(v)]
    return fmean(known) if known else None


def _errors(group: list[TrialRecord]) -> dict[str, int]:
    return dict(sorted(Counter(t.exception for t in group if t.exception).items()))
