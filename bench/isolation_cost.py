"""What the verifier's isolation costs: `orharbor check` before and after it, on the shipped rows.

    .venv/bin/python bench/isolation_cost.py [-j 2] [--baseline fe4fe5c] [--problem jobshop]

Each side exports the shipped rows with its own exporter (so each side's tasks
carry its own verifier) and checks them with its own `orharbor check` through
Harbor's trial code, in both verifier modes. The baseline is commit
``--baseline``, unpacked from git: by default fe4fe5c, the check before the
environment was held to a container engine's defaults (user and network
namespaces per sandbox, Docker's seccomp profile, an image-like file system,
race-free transfers, the verifier's manifests); 0eb86d9 is the check before
the verifier's own isolation (lockdown, per-run uids, disk watch). The
candidate is this checkout. Prints per mode: tasks passed, trials per minute
and wall seconds of the whole check, the mean verifier phase of level-2
trials (where the isolation runs) and of level-1 trials, and the ratios
candidate / baseline, then a phase table: the mean seconds of each phase of a
trial (environment set-up, agent set-up, agent run, verifier), before and
after. Needs root and bubblewrap, as check does.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from baseline_src import REPO, run_json, unpack

#: The last commit before the environment was held to Docker's defaults (issue 21).
BASELINE = "fe4fe5c"

RUN = """
import json, sys, time
from datetime import datetime
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from orharbor import check
from orharbor.datasets.rows import read_rows, shipped_datasets
from orharbor.exporter import ExportOptions, export_dataset
assert check.__file__.startswith(sys.argv[1]), check.__file__
problem = sys.argv[5] or None
rows = [r for p in shipped_datasets() for r in read_rows(p) if problem in (None, r["problem"])]
tasks, jobs_dir = Path(sys.argv[2]) / "tasks", Path(sys.argv[2]) / "jobs"
export_dataset(rows, tasks, ExportOptions(verifier_mode=sys.argv[4]))
start = time.monotonic()
results = check.check_tasks(tasks, jobs=int(sys.argv[3]), jobs_dir=jobs_dir)
seconds = time.monotonic() - start
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
levels = {1: [], 2: []}
phases = {name: [] for name in PHASES}
def seconds_of(timing):
    if not timing or not timing.get("started_at") or not timing.get("finished_at"):
        return None
    return (datetime.fromisoformat(timing["finished_at"]) - datetime.fromisoformat(timing["started_at"])).total_seconds()
for result in sorted(jobs_dir.glob("*/*/result.json")):
    trial = json.loads(result.read_text())
    for name in PHASES:
        took = seconds_of(trial.get(name))
        if took is not None:
            phases[name].append(took)
    took = seconds_of(trial.get("verifier"))
    if took is not None:
        levels[2 if "-l2-" in trial.get("task_name", result.parent.name) else 1].append(took)
mean = lambda values: sum(values) / max(1, len(values))
print(json.dumps({"seconds": seconds, "tasks": len(results), "passed": sum(r.ok for r in results),
                  "trials": len(list(jobs_dir.glob("*/*/result.json"))),
                  "verifier_l1": mean(levels[1]), "verifier_l2": mean(levels[2]),
                  "phases": {name: mean(values) for name, values in phases.items()}}))
"""


def timed_check(src: Path, scratch: Path, jobs: int, mode: str, problem: str | None) -> dict:
    scratch.mkdir(parents=True)
    return run_json(RUN, src, str(scratch), str(jobs), mode, problem or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--workers", type=int, default=2, help="trials at once")
    parser.add_argument("--baseline", default=BASELINE, help="commit whose check is the baseline")
    parser.add_argument("--problem", default=None, help="only this problem class's shipped rows")
    args = parser.parse_args()
    print(
        f"check of the shipped rows{' of ' + args.problem if args.problem else ''}, -j {args.workers}; "
        f"baseline {args.baseline}, candidate this checkout"
    )
    print(
        f"{'mode':<9} {'tasks':>5} {'passed':>7} {'trials/min before/after':>24} {'ratio':>6} "
        f"{'before s':>9} {'after s':>8} "
        f"{'L2 verifier before/after s':>27} {'ratio':>6} {'L1 verifier before/after s':>27}"
    )
    sides: dict[str, tuple[dict, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="orharbor-bench-") as scratch:
        old_src = unpack(args.baseline, Path(scratch) / "baseline")
        for mode in ("separate", "shared"):
            old = timed_check(old_src, Path(scratch) / f"old-{mode}", args.workers, mode, args.problem)
            new = timed_check(REPO / "src", Path(scratch) / f"new-{mode}", args.workers, mode, args.problem)
            l2 = f"{old['verifier_l2']:.2f}/{new['verifier_l2']:.2f}"
            l1 = f"{old['verifier_l1']:.2f}/{new['verifier_l1']:.2f}"
            rates = [60 * side["trials"] / side["seconds"] for side in (old, new)]
            print(
                f"{mode:<9} {new['tasks']:>5} {old['passed']:>3}/{new['passed']:<3} "
                f"{rates[0]:>11.1f}/{rates[1]:<12.1f} {rates[1] / rates[0]:>6.2f} {old['seconds']:>9.1f} "
                f"{new['seconds']:>8.1f} {l2:>27} "
                f"{new['verifier_l2'] / max(old['verifier_l2'], 1e-9):>6.2f} {l1:>27}"
            )
            sides[mode] = (old, new)
        print("\nmean seconds per trial, phase by phase (Harbor's own timings in each trial's result.json)")
        print(f"{'mode':<9} {'phase':<18} {'before':>8} {'after':>8} {'ratio':>6}")
        for mode, (old, new) in sides.items():
            for phase, before in old.get("phases", {}).items():
                after = new["phases"][phase]
                print(f"{mode:<9} {phase:<18} {before:>8.2f} {after:>8.2f} {after / max(before, 1e-9):>6.2f}")


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print(f"({time.monotonic() - start:.0f} s in all)")
