"""Integer mixing for generator seeds: the same on every platform and Python.

Generators derive their private PRNG seeds from ``(seed, size)`` with these
(splitmix64 over the seed, FNV-1a over a text salt), never with ``hash()``.
"""

from __future__ import annotations

import random

MASK64 = 2**64 - 1


def splitmix64(x: int) -> int:
    """One splitmix64 step (Steele, Lea and Flood 2014) on a 64-bit integer."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def fnv1a64(text: str) -> int:
    """64-bit FNV-1a hash of the UTF-8 bytes of ``text``."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def size_seed(salt: str, seed: int, size: str) -> int:
    """A 64-bit PRNG seed from ``(seed, size)``, distinct per problem class through ``salt``."""
    return splitmix64(splitmix64(seed & MASK64) ^ fnv1a64(salt + size))


def count_size(size: str, sizes: tuple[str, ...], problem: str) -> int:
    """``"n50"`` -> 50, for the classes whose sizes are ``n<count>``; only the sizes of ``sizes``."""
    if not isinstance(size, str) or size not in sizes:
        raise ValueError(f"unknown {problem} size {size!r}; valid sizes: {', '.join(sizes)}")
    return int(size[1:])


def count_rng(problem: str, seed: int, size: str, sizes: tuple[str, ...]) -> tuple[int, int, random.Random]:
    """``(n, PRNG seed, PRNG)`` of ``(seed, size)`` for a class whose sizes are ``n<count>``; both checked first.

    The PRNG seed is :func:`size_seed` salted with ``problem + "/"``.
    """
    check_seed(seed, sizes)
    n = count_size(size, sizes, problem)
    derived = size_seed(problem + "/", seed, size)
    return n, derived, random.Random(derived)


def check_seed(seed: object, sizes: tuple[str, ...]) -> None:
    """Generators take a true integer seed in [0, 2^63); anything else is a ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2^63), got {seed!r}; valid sizes: {', '.join(sizes)}")
