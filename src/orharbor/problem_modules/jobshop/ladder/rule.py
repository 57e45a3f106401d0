"""Job shop, constructive rule: Giffler-Thompson active schedule with the MWKR priority.

Giffler and Thompson (1960), "Algorithms for solving production-scheduling
problems", Operations Research 8(4). At each step, among the next unscheduled
operation of every job, take the one that can complete earliest; its machine is
the one to decide on. The conflict set is every candidate on that machine that
could start before that completion time; the operation of the job with the Most
WorK Remaining (MWKR, the sum of the durations of its unscheduled operations;
ties to the lower job index) is scheduled there, as early as possible. Every
schedule built this way is active: no operation can start earlier without
delaying another.

Its program begins with ladder_shared/local_search.py, the loop of the search
that follows the rule, which the rule does not use
(orharbor.problem_modules.ladder_programs.program, from the "# ladder: shared
local_search" line below). Usage: python3 -I rule.py INSTANCE.json SOLUTION.json
"""

import json
import sys

# ladder: shared local_search


def giffler_thompson_mwkr(machines, durations):
    """starts[j][k] of the Giffler-Thompson schedule with the MWKR priority."""
    n, m = len(machines), len(machines[0])
    next_op = [0] * n
    job_ready = [0] * n
    machine_ready = [0] * m
    work_left = [sum(row) for row in durations]
    starts = [[0] * m for _ in range(n)]
    for _ in range(n * m):
        # The candidate that completes first fixes the machine and the time c*.
        first_job, first_end = -1, None
        for j in range(n):
            k = next_op[j]
            if k < m:
                end = max(job_ready[j], machine_ready[machines[j][k]]) + durations[j][k]
                if first_end is None or end < first_end:
                    first_job, first_end = j, end
        machine = machines[first_job][next_op[first_job]]
        # Conflict set: candidates on that machine able to start before c*; MWKR picks one.
        chosen = first_job
        for j in range(n):
            k = next_op[j]
            if k < m and machines[j][k] == machine and max(job_ready[j], machine_ready[machine]) < first_end:
                if work_left[j] > work_left[chosen] or (work_left[j] == work_left[chosen] and j < chosen):
                    chosen = j
        k = next_op[chosen]
        start = max(job_ready[chosen], machine_ready[machine])
        end = start + durations[chosen][k]
        starts[chosen][k] = start
        job_ready[chosen] = machine_ready[machine] = end
        work_left[chosen] -= durations[chosen][k]
        next_op[chosen] = k + 1
    return starts


def main(schedule=giffler_thompson_mwkr):
    """Write the ``starts`` that ``schedule(machines, durations)`` gives (the rule's by default) for the instance."""
    with open(sys.argv[1]) as f:
        instance = json.load(f)
    starts = schedule(instance["machines"], instance["durations"])
    with open(sys.argv[2], "w") as f:
        json.dump({"starts": starts}, f)


if __name__ == "__main__":
    main()
