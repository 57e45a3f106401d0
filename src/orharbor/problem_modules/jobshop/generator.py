"""Job shop instances: Taillard's 1993 generator and the seeded ``generate``.

Taillard, E. (1993) "Benchmarks for basic scheduling problems", EJOR 64, 278-285.
His generator draws every number from one portable linear congruential
generator, ``X <- 16807 X mod (2^31 - 1)`` (computed with Schrage's method so it
never overflows 32-bit arithmetic), so a pair of seeds (time seed, machine seed)
names an instance exactly: ``taillard(840612802, 398197754, 15, 15)`` is ta01.

``generate(seed, size)`` keeps that design and varies, per seed, the duration
range (Taillard's 1..99, the DMU 1..200, or a narrow 50..100) and the routing
(Taillard's random permutations, or for about a quarter of the seeds the
"two-stage" routing of Demirkol, Mehta and Uzsoy's DMU41-80, in which every job
visits the first half of the machines before the second half).
"""

from __future__ import annotations

import math

from ..seeds import MASK64, check_seed, fnv1a64, splitmix64

SIZES = ("4x4", "6x6", "10x10", "15x15", "20x15", "20x20", "30x15", "30x20", "50x15", "50x20", "100x20")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "4x4"): "85f69468536dab9ed5e402113bc87e6c403012f12140fa04b3dc283e46b57330",
    (7, "15x15"): "aac0b04f4aa20f3b064ff19b0f5534782b20d842b87712b85267c1135e50dc53",
    (123456789, "50x20"): "c75509f807d9b28618a09439149dd74e722b9af177ba6515d24d7f6f338161f3",
}

_M = 2**31 - 1  # modulus of Taillard's LCG
_A = 16807
_B = 127773  # _M // _A
_C = 2836  # _M % _A

#: Duration ranges drawn per seed: Taillard (1993), Demirkol-Mehta-Uzsoy (1998), narrow.
DURATION_RANGES = ((1, 99), (1, 200), (50, 100))


class TaillardRng:
    """Taillard's portable LCG with his ``unif(seed, low, high)`` draw."""

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 < seed < _M:
            raise ValueError(f"Taillard seeds must be integers in [1, {_M - 1}], got {seed!r}")
        self.seed = seed

    def next(self) -> int:
        k = self.seed // _B
        seed = _A * (self.seed % _B) - k * _C
        if seed < 0:
            seed += _M
        self.seed = seed
        return seed

    def unif(self, low: int, high: int) -> int:
        """An integer uniform on ``[low, high]``, exactly as in Taillard's C code."""
        value_0_1 = self.next() / float(_M)
        return low + math.floor(value_0_1 * (high - low + 1))


def taillard(time_seed: int, machine_seed: int, n_jobs: int, n_machines: int, low: int = 1, high: int = 99) -> dict:
    """Taillard's job shop generator: durations and (0-based) machine orders.

    All durations are drawn first from the time seed's stream (job by job,
    operation by operation); then every job's machine order starts as the
    identity and position ``i`` is swapped with position ``unif(i, m-1)`` for
    ``i = 0..m-1``, from the machine seed's stream.
    """
    for label, value in (("n_jobs", n_jobs), ("n_machines", n_machines)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{label} must be a positive integer, got {value!r}")
    if isinstance(low, bool) or isinstance(high, bool) or not isinstance(low, int) or not isinstance(high, int):
        raise ValueError("low and high must be integers")
    if not 0 <= low <= high:
        raise ValueError(f"need 0 <= low <= high, got low={low}, high={high}")
    times = TaillardRng(time_seed)
    durations = [[times.unif(low, high) for _ in range(n_machines)] for _ in range(n_jobs)]
    order = TaillardRng(machine_seed)
    machines = []
    for _ in range(n_jobs):
        row = list(range(n_machines))
        _taillard_shuffle(row, order)
        machines.append(row)
    return {
        "problem": "jobshop",
        "name": f"taillard-{n_jobs}x{n_machines}-{time_seed}-{machine_seed}",
        "n_jobs": n_jobs,
        "n_machines": n_machines,
        "machines": machines,
        "durations": durations,
        "time_seed": time_seed,
        "machine_seed": machine_seed,
    }


def _taillard_shuffle(row: list[int], rng: TaillardRng) -> None:
    last = len(row) - 1
    for i in range(len(row)):
        k = rng.unif(i, last)
        row[i], row[k] = row[k], row[i]


def parse_size(size: str) -> tuple[int, int]:
    """``"15x15"`` -> ``(15, 15)``; only the sizes of :data:`SIZES`."""
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(f"unknown jobshop size {size!r}; valid sizes: {', '.join(SIZES)}")
    jobs, machines = size.split("x")
    return int(jobs), int(machines)


def derive_seeds(seed: int, size: str) -> tuple[int, int, int]:
    """(time_seed, machine_seed, style_seed) in [1, 2^31 - 2] from ``(seed, size)``.

    Pure 64-bit integer arithmetic (splitmix64 over the seed and an FNV-1a hash
    of the size name), so the result is the same on every platform.
    """
    state = splitmix64(splitmix64(seed & MASK64) ^ fnv1a64(size))
    out = []
    for _ in range(3):
        state = splitmix64(state)
        out.append(1 + state % (_M - 1))
    return out[0], out[1], out[2]


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: Taillard's design with per-seed structure."""
    check_seed(seed, SIZES)
    n_jobs, n_machines = parse_size(size)
    time_seed, machine_seed, style_seed = derive_seeds(seed, size)
    style = TaillardRng(style_seed)
    low, high = DURATION_RANGES[style.unif(0, len(DURATION_RANGES) - 1)]
    routing = "two-stage" if style.unif(0, 3) == 0 else "random"
    inst = taillard(time_seed, machine_seed, n_jobs, n_machines, low, high)
    if routing == "two-stage":
        # Demirkol-Mehta-Uzsoy DMU41-80: the first half of the machines (in a
        # random order) before the second half (in a random order).
        order = TaillardRng(machine_seed)
        half = n_machines // 2
        machines = []
        for _ in range(n_jobs):
            first, second = list(range(half)), list(range(half, n_machines))
            _taillard_shuffle(first, order)
            _taillard_shuffle(second, order)
            machines.append(first + second)
        inst["machines"] = machines
    return {
        "problem": "jobshop",
        "name": f"jobshop-{size}-s{seed}",
        "n_jobs": n_jobs,
        "n_machines": n_machines,
        "machines": inst["machines"],
        "durations": inst["durations"],
        "generator": {
            "seed": seed,
            "size": size,
            "version": GENERATOR_VERSION,
            "time_seed": time_seed,
            "machine_seed": machine_seed,
            "low": low,
            "high": high,
            "routing": routing,
        },
    }
