"""`orharbor check` through Harbor's trial code against the hand-written replay it replaced, side by side.

    .venv/bin/python bench/check_speed.py [-j 2] [--baseline 45daf76] [--attacks]

Both run in this process's interpreter on the same exported tasks (the shipped
rows, once per verifier mode): the baseline is the `orharbor check` of commit
``--baseline`` (the last one with the replay), unpacked from git into a
temporary folder and put first on ``sys.path``; the candidate is this checkout.
Prints one row per mode: tasks, tasks passed, seconds of each, and the ratio
candidate / baseline. Needs root and bubblewrap, as check does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from baseline_src import REPO, run_json, unpack

#: The last commit whose check replayed Harbor's trial flow by hand.
BASELINE = "45daf76"

RUN = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from orharbor import check
assert check.__file__.startswith(sys.argv[1]), check.__file__
start = time.monotonic()
results = check.check_tasks(Path(sys.argv[2]), jobs=int(sys.argv[3]), attacks=sys.argv[4] == "1")
print(json.dumps({"seconds": time.monotonic() - start, "tasks": len(results),
                  "passed": sum(r.ok for r in results)}))
"""


def timed_check(src: Path, tasks: Path, jobs: int, attacks: bool) -> dict:
    return run_json(RUN, src, str(tasks), str(jobs), "1" if attacks else "0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--workers", type=int, default=2, help="trials at once")
    parser.add_argument("--baseline", default=BASELINE, help="commit whose check is the baseline")
    parser.add_argument("--attacks", action="store_true", help="check with the attack suite (much longer)")
    parser.add_argument("--problem", default=None, help="only this problem class's shipped rows")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from orharbor.datasets.rows import read_rows, shipped_datasets
    from orharbor.exporter import ExportOptions, export_dataset

    rows = [r for p in shipped_datasets() for r in read_rows(p) if args.problem in (None, r["problem"])]
    print(
        f"check on {len(rows)} shipped rows, -j {args.workers}{', with attacks' if args.attacks else ''}; "
        f"baseline: the replay of {args.baseline}"
    )
    print(f"{'mode':<9} {'tasks':>5} {'passed (replay/harbor)':>23} {'replay s':>9} {'harbor s':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="orharbor-bench-") as scratch:
        old_src = unpack(args.baseline, Path(scratch) / "baseline")
        for mode in ("separate", "shared"):
            tasks = Path(scratch) / f"tasks-{mode}"
            export_dataset(rows, tasks, ExportOptions(verifier_mode=mode))
            old = timed_check(old_src, tasks, args.workers, args.attacks)
            new = timed_check(REPO / "src", tasks, args.workers, args.attacks)
            passed = f"{old['passed']}/{new['passed']}"
            print(
                f"{mode:<9} {new['tasks']:>5} {passed:>23} {old['seconds']:>9.1f} {new['seconds']:>9.1f} "
                f"{new['seconds'] / old['seconds']:>6.2f}"
            )


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print(f"({time.monotonic() - start:.0f} s in all)")
