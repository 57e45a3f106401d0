"""Weighted tardiness instances after the OR-Library ``wt`` sets.

Crauwels, H.A.J., Potts, C.N. and Van Wassenhove, L.N. (1998) "Local search
heuristics for the single machine total weighted tardiness scheduling
problem", INFORMS Journal on Computing 10, 341-350; the instances are OR-Library's
wt40, wt50 and wt100. For every job an integer processing time ``p ~ U[1, 100]``
and an integer weight ``w ~ U[1, 10]``; with ``P = sum(p)``, a tardiness factor
TF and a relative range of due dates RDD, every due date is an integer
``d ~ U[P (1 - TF - RDD/2), P (1 - TF + RDD/2)]``. OR-Library holds 5 instances
of each of the 25 pairs (TF, RDD) in {0.2, 0.4, 0.6, 0.8, 1.0}^2; here the pair
is drawn per seed. The lower end of the range is clamped at 0 (it is negative
for large TF and RDD), as in common implementations of that design.

All bounds are computed in exact integer arithmetic (TF = t/5, RDD = r/5), so
the instances are the same on every platform.
"""

from __future__ import annotations

from ..seeds import count_rng

SIZES = ("n8", "n40", "n50", "n100", "n200", "n500", "n1000")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "n8"): "b155ffa6daca77d6799f2d37f92570e85b7e26888e7ff58a875b226d638e3d6b",
    (7, "n100"): "e54f74340a991dc922f7ecbd1aa596fb64b6140da7e266c2dd7cc1bcc5998571",
    (123456789, "n1000"): "c03495c8cdfe28d8e0352fd5e4d78d3ebd1c466cab538cf05d6194564bdb913b",
}

#: TF and RDD take the values k/5 for k in 1..5 (0.2, 0.4, 0.6, 0.8, 1.0).
FACTORS = (0.2, 0.4, 0.6, 0.8, 1.0)
P_RANGE = (1, 100)
W_RANGE = (1, 10)


def due_date_range(total: int, tf_fifths: int, rdd_fifths: int) -> tuple[int, int]:
    """Integer bounds of ``[P (1 - TF - RDD/2), P (1 - TF + RDD/2)]``, lower end clamped at 0.

    With TF = t/5 and RDD = r/5 the ends are ``P (10 - 2t -+ r) / 10``; the
    lower one is rounded up, the upper one down (both exact).
    """
    low = -((-total * (10 - 2 * tf_fifths - rdd_fifths)) // 10)  # ceil
    high = (total * (10 - 2 * tf_fifths + rdd_fifths)) // 10  # floor
    low = max(0, low)
    return min(low, high), high


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: OR-Library wt design, (TF, RDD) drawn per seed."""
    n, derived, rng = count_rng("wtardiness", seed, size, SIZES)
    tf_fifths = 1 + rng.randrange(5)
    rdd_fifths = 1 + rng.randrange(5)
    processing = [rng.randint(*P_RANGE) for _ in range(n)]
    weights = [rng.randint(*W_RANGE) for _ in range(n)]
    total = sum(processing)
    low, high = due_date_range(total, tf_fifths, rdd_fifths)
    due = [rng.randint(low, high) for _ in range(n)]
    return {
        "problem": "wtardiness",
        "name": f"wtardiness-{size}-s{seed}",
        "n_jobs": n,
        "processing_times": processing,
        "weights": weights,
        "due_dates": due,
        "generator": {
            "seed": seed,
            "size": size,
            "version": GENERATOR_VERSION,
            "prng_seed": derived,
            "TF": FACTORS[tf_fifths - 1],
            "RDD": FACTORS[rdd_fifths - 1],
            "P": total,
            "due_date_low": low,
            "due_date_high": high,
        },
    }
