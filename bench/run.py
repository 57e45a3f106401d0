"""Speed and memory of the generator, baseline and verifier of every problem class, per size.

Run: ``python bench/run.py [--problem NAME] [--repeat N]``. Prints a table; the verifier
column divided by the size column should stay flat (linear or n log n verifiers).
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

from orharbor import problem_modules
from orharbor.verifiers import safe_json


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name: str, size: str, repeat: int) -> dict:
    module = problem_modules.get(name)
    instance = module.generate(0, size)
    solution = module.baseline(instance)
    text = json.dumps(solution).encode()
    tracemalloc.start()
    module.evaluate(instance, safe_json.parse_strict(text, "solution.json"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "problem": name,
        "size": size,
        "solution_kb": len(text) / 1024,
        "generate_ms": 1e3 * best_of(repeat, lambda: module.generate(0, size)),
        "baseline_ms": 1e3 * best_of(repeat, lambda: module.baseline(instance)),
        "parse_ms": 1e3 * best_of(repeat, lambda: safe_json.parse_strict(text, "solution.json")),
        "verify_ms": 1e3 * best_of(repeat, lambda: module.evaluate(instance, solution)),
        "verify_peak_kb": peak / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problem", action="append", help="problem class (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    columns = [
        "problem",
        "size",
        "solution_kb",
        "generate_ms",
        "baseline_ms",
        "parse_ms",
        "verify_ms",
        "verify_peak_kb",
    ]
    print(" | ".join(f"{c:>14}" for c in columns))
    print("-|-".join("-" * 14 for _ in columns))
    for name in args.problem or problem_modules.names():
        for size in problem_modules.get(name).SIZES:
            row = measure(name, size, args.repeat)
            print(" | ".join(f"{row[c]:>14.2f}" if isinstance(row[c], float) else f"{row[c]:>14}" for c in columns))


if __name__ == "__main__":
    main()
