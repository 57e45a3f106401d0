"""How far each release's references are from the best known values, part by part.

    .venv/bin/python bench/reference_gaps.py NEW_RELEASE [OLD_RELEASE]

For every part (``*.jsonl``) of NEW_RELEASE: the mean relative gap of its references to the
best known values NEW_RELEASE stores (``best_known`` of a level-1 row, ``eval_best_known`` of a
level-2 row), and, when OLD_RELEASE is given, the mean gap of OLD_RELEASE's references on the
instances both releases share (same problem, size and seed, or the same published instance),
measured against NEW_RELEASE's best known values. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orharbor.datasets.rows import iter_rows, row_instances


def instances(row: dict):
    """(key, reference, best known value) of every instance a row scores. The key names the instance across
    releases: problem, size and seed (or, for a published instance, the row's id)."""
    for instance in row_instances(row):
        name = instance.seed if instance.seed is not None else instance.key
        yield (row["problem"], row["size"], name), instance.reference, (instance.best_known or {}).get("value")


def gaps(new: Path, old: Path | None) -> list[tuple[str, int, float | None, int, float | None]]:
    """(part, instances, mean new gap, shared instances, mean old gap on them) per part of ``new``."""
    before = {}
    if old is not None:
        for path in sorted(old.glob("*.jsonl")):
            for key, reference, _ in (i for row in iter_rows(path) for i in instances(row)):
                before[key] = reference
    table = []
    for path in sorted(new.glob("*.jsonl")):
        now, then = [], []
        for key, reference, known in (i for row in iter_rows(path) for i in instances(row)):
            if known is None or known <= 0:
                continue
            now.append((reference - known) / known)
            if key in before:
                then.append((before[key] - known) / known)
        mean = lambda xs: sum(xs) / len(xs) if xs else None
        table.append((path.stem, len(now), mean(now), len(then), mean(then)))
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("new", type=Path)
    parser.add_argument("old", type=Path, nargs="?")
    args = parser.parse_args()
    for release in (args.new, args.old):
        if release is not None and not any(release.glob("*.jsonl")):
            print(f"{release}: no parts (*.jsonl) there", file=sys.stderr)
            return 1
    pct = lambda x: "-" if x is None else f"{100 * x:.2f}%"
    print(
        f"| part | instances | {args.new.name} reference gap |"
        + (f" shared | {args.old.name} reference gap |" if args.old else "")
    )
    print("|---|---|---|" + ("---|---|" if args.old else ""))
    for part, n, now, shared, then in gaps(args.new, args.old):
        print(f"| {part} | {n} | {pct(now)} |" + (f" {shared} | {pct(then)} |" if args.old else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
