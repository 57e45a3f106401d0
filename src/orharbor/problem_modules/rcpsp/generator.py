"""RCPSP instances after ProGen, the generator of PSPLIB, and the seeded ``generate``.

Kolisch, R., Sprecher, A. and Drexl, A. (1995) "Characterization and generation
of a general class of resource-constrained project scheduling problems",
Management Science 41, 1693-1703. ProGen controls three design parameters:

* network complexity NC: non-redundant arcs per activity, dummy source and sink
  (and their arcs) included, so ``arcs = round(NC * n_activities)``;
* resource factor RF: the share of the resources a non-dummy activity requests;
* resource strength RS: where each capacity lies between ``K_min`` (the largest
  single demand) and ``K_max`` (the peak demand of the earliest-start schedule):
  ``R_k = K_min + round(RS * (K_max - K_min))``.

PSPLIB's single-mode sets use 4 renewable resources, durations and demands
uniform on 1..10, at most 3 start and 3 finish activities and at most 3
successors and 3 predecessors per activity, NC in {1.5, 1.8, 2.1}, RF in
{0.25, 0.5, 0.75, 1.0} and RS in {0.2, 0.5, 0.7, 1.0} (j30, j60, j90) or
{0.1, ..., 0.5} (j120). ``generate(seed, size)`` draws NC, RF and RS from those
levels per seed and builds a redundancy-free network numbered topologically
(every arc goes from a smaller to a larger index), as PSPLIB's are.
"""

from __future__ import annotations

import random

from ..seeds import MASK64, check_seed, fnv1a64, splitmix64

SIZES = ("j10", "j30", "j60", "j90", "j120", "j300")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "j10"): "9fb301362414fd69607e9752b682523ea357cc0eba32e038eddefce01a0842af",
    (7, "j30"): "736572cbc4a9f23d2b93f86fcdf8fa632602fc812a4eb9ecdbac85de95945763",
    (123456789, "j300"): "578afadceea00367c4321a16793d1523aa2cbdf675640e13da8d368e7acca63c",
}

#: Non-dummy activities per size.
N_REAL = {"j10": 10, "j30": 30, "j60": 60, "j90": 90, "j120": 120, "j300": 300}
N_RESOURCES = 4
#: ProGen levels, as integers: NC in tenths, RF and RS in hundredths.
NC_LEVELS = (15, 18, 21)
RF_LEVELS = (25, 50, 75, 100)
RS_LEVELS = (20, 50, 70, 100)
RS_LEVELS_LARGE = (10, 20, 30, 40, 50)  # j120 and larger
LARGE_SIZES = ("j120", "j300")
DURATIONS = (1, 10)
DEMANDS = (1, 10)
MAX_START = 3
MAX_FINISH = 3
MAX_SUCCESSORS = 3
MAX_PREDECESSORS = 3


def derive_seed(seed: int, size: str) -> int:
    """A 63-bit PRNG seed from ``(seed, size)`` by pure integer arithmetic (splitmix64, FNV-1a)."""
    state = splitmix64(splitmix64(seed & MASK64) ^ fnv1a64("rcpsp:" + size))
    return splitmix64(state) >> 1


def _round_ratio(numerator: int, denominator: int) -> int:
    """round(numerator / denominator), halves up, for non-negative integers."""
    return (2 * numerator + denominator) // (2 * denominator)


def earliest_starts(durations: list[int], successors: list[list[int]]) -> list[int]:
    """Precedence-only earliest starts (activities numbered topologically)."""
    es = [0] * len(durations)
    for i, succ in enumerate(successors):
        end = es[i] + durations[i]
        for j in succ:
            if es[j] < end:
                es[j] = end
    return es


def peak_demands(starts: list[int], durations: list[int], demands: list[list[int]], n_resources: int) -> list[int]:
    """Peak usage of each resource in a schedule (event sweep, ends before starts)."""
    events = []
    for i, (s, d) in enumerate(zip(starts, durations)):
        if d > 0:
            events.append((s, 1, i))
            events.append((s + d, 0, i))
    events.sort()
    usage = [0] * n_resources
    peak = [0] * n_resources
    for _, kind, i in events:
        sign = 1 if kind else -1
        for k in range(n_resources):
            usage[k] += sign * demands[i][k]
            if usage[k] > peak[k]:
                peak[k] = usage[k]
    return peak


class _Network:
    """Arcs among the non-dummy activities 1..J with reachability bitsets."""

    def __init__(self, n: int) -> None:
        self.succ: list[list[int]] = [[] for _ in range(n + 2)]
        self.pred: list[list[int]] = [[] for _ in range(n + 2)]
        self.succ_bits = [0] * (n + 2)
        self.desc = [0] * (n + 2)  # strict descendants
        self.anc = [0] * (n + 2)  # strict ancestors
        self.arcs = 0

    def addable(self, i: int, j: int) -> bool:
        """(i, j) is neither redundant nor makes an existing arc redundant."""
        if self.desc[i] >> j & 1:
            return False
        below = self.desc[j] | (1 << j)
        above = self.anc[i] | (1 << i)
        a = above
        while a:
            low = a & -a
            if self.succ_bits[low.bit_length() - 1] & below:
                return False
            a ^= low
        return True

    def add(self, i: int, j: int) -> None:
        self.succ[i].append(j)
        self.pred[j].append(i)
        self.succ_bits[i] |= 1 << j
        self.arcs += 1
        below = self.desc[j] | (1 << j)
        above = self.anc[i] | (1 << i)
        a = above
        while a:
            low = a & -a
            self.desc[low.bit_length() - 1] |= below
            a ^= low
        b = below
        while b:
            low = b & -b
            self.anc[low.bit_length() - 1] |= above
            b ^= low


def progen_network(rng: random.Random, n: int, nc10: int) -> tuple[list[list[int]], dict]:
    """Successor lists of activities 0..n+1 (0 source, n+1 sink) hitting NC if possible.

    Activities 1..3 are the start activities and the last 3 the finish
    activities. Every other activity first gets one random earlier predecessor,
    every non-finish activity without a successor one random later successor,
    then random arcs are added while they keep the network redundancy-free and
    within the limit of 3 successors and 3 predecessors per activity, until
    ``round(NC * (n + 2))`` arcs (dummy arcs included) or a try budget is spent.
    """
    n_start = min(MAX_START, n // 3)
    n_finish = min(MAX_FINISH, n // 3)
    last_open = n - n_finish  # activities 1..last_open may have non-dummy successors
    net = _Network(n)
    for j in range(n_start + 1, n + 1):
        options = [i for i in range(1, min(j - 1, last_open) + 1) if len(net.succ[i]) < MAX_SUCCESSORS]
        net.add(rng.choice(options), j)
    for i in range(1, last_open + 1):
        if net.succ[i]:
            continue
        options = [j for j in range(max(i + 1, n_start + 1), n + 1) if len(net.pred[j]) < MAX_PREDECESSORS]
        rng.shuffle(options)
        chosen = next((j for j in options if net.addable(i, j)), None)
        if chosen is None:  # relax the predecessor limit rather than add a finish activity
            chosen = next((j for j in range(max(i + 1, n_start + 1), n + 1) if net.addable(i, j)), None)
        if chosen is not None:
            net.add(i, chosen)
    finish = [i for i in range(1, n + 1) if not net.succ[i]]
    target = _round_ratio(nc10 * (n + 2), 10)
    tries = 0
    budget = 200 * (n + 2)
    while net.arcs + n_start + len(finish) < target and tries < budget:
        tries += 1
        i = rng.randint(1, last_open)
        j = rng.randint(max(i + 1, n_start + 1), n) if max(i + 1, n_start + 1) <= n else 0
        if (
            j == 0
            or len(net.succ[i]) >= MAX_SUCCESSORS
            or len(net.pred[j]) >= MAX_PREDECESSORS
            or not net.addable(i, j)
        ):
            continue
        net.add(i, j)
    successors = [list(range(1, n_start + 1))]
    for i in range(1, n + 1):
        successors.append(sorted(net.succ[i]) + ([n + 1] if not net.succ[i] else []))
    successors.append([])
    arcs = sum(len(s) for s in successors)
    info = {"n_start": n_start, "n_finish": len(finish), "arcs": arcs, "arcs_target": target}
    return successors, info


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: ProGen's design with NC, RF, RS drawn per seed."""
    check_seed(seed, SIZES)
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(f"unknown rcpsp size {size!r}; valid sizes: {', '.join(SIZES)}")
    n = N_REAL[size]
    n_act = n + 2
    k_res = N_RESOURCES
    derived = derive_seed(seed, size)
    rng = random.Random(derived)
    nc10 = rng.choice(NC_LEVELS)
    rf100 = rng.choice(RF_LEVELS)
    rs100 = rng.choice(RS_LEVELS_LARGE if size in LARGE_SIZES else RS_LEVELS)

    successors, net_info = progen_network(rng, n, nc10)
    durations = [0] + [rng.randint(*DURATIONS) for _ in range(n)] + [0]

    # Resource factor: every activity requests at least one resource, and
    # round(RF * K * n) (activity, resource) requests are spread at random.
    requests = max(n, min(n * k_res, _round_ratio(rf100 * k_res * n, 100)))
    requested = [[False] * k_res for _ in range(n_act)]
    for i in range(1, n + 1):
        requested[i][rng.randrange(k_res)] = True
    pool = [(i, k) for i in range(1, n + 1) for k in range(k_res) if not requested[i][k]]
    for i, k in rng.sample(pool, requests - n):
        requested[i][k] = True
    demands = [[rng.randint(*DEMANDS) if requested[i][k] else 0 for k in range(k_res)] for i in range(n_act)]

    # Resource strength: capacities between K_min and K_max.
    k_min = [max(row[k] for row in demands) for k in range(k_res)]
    k_max = peak_demands(earliest_starts(durations, successors), durations, demands, k_res)
    capacities = [lo + _round_ratio(rs100 * (hi - lo), 100) for lo, hi in zip(k_min, k_max)]
    spread = [(c - lo, hi - lo) for c, lo, hi in zip(capacities, k_min, k_max) if hi > lo]
    rs_achieved = round(sum(a / b for a, b in spread) / len(spread), 4) if spread else 1.0

    return {
        "problem": "rcpsp",
        "name": f"rcpsp-{size}-s{seed}",
        "n_activities": n_act,
        "n_resources": k_res,
        "capacities": capacities,
        "durations": durations,
        "demands": demands,
        "successors": successors,
        "generator": {
            "seed": seed,
            "size": size,
            "version": GENERATOR_VERSION,
            "derived_seed": derived,
            "nc": nc10 / 10,
            "nc_achieved": round(net_info["arcs"] / n_act, 4),
            "arcs": net_info["arcs"],
            "arcs_target": net_info["arcs_target"],
            "n_start": net_info["n_start"],
            "n_finish": net_info["n_finish"],
            "rf": rf100 / 100,
            "rf_achieved": round(requests / (k_res * n), 4),
            "rs": rs100 / 100,
            "rs_achieved": rs_achieved,
            "k_min": k_min,
            "k_max": k_max,
        },
    }
