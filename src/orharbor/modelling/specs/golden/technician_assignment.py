"""Golden solution: technicians to repair jobs (assignment, OR-Tools SimpleLinearSumAssignment).

Reads minutes.csv; writes total_minutes.txt and assignment.txt.

Uniqueness: any other perfect assignment leaves out at least one technician-job pair of the
optimal one. Forbidding each of the eight optimal pairs in turn and re-solving costs at least
5 minutes more than the optimum every time, so the optimal assignment is unique (checked with this solver and by
brute-force enumeration of all 8! assignments in tests/test_spec_library.py).
"""

import csv

from ortools.graph.python import linear_sum_assignment

with open("minutes.csv", newline="") as f:
    reader = csv.reader(f)
    header = next(reader)
    jobs = header[1:]
    rows = [row for row in reader]
technicians = [row[0] for row in rows]

lsa = linear_sum_assignment.SimpleLinearSumAssignment()
for i, row in enumerate(rows):
    for j, cell in enumerate(row[1:]):
        if cell.strip() != "-":  # "-": not qualified, no arc
            lsa.add_arc_with_cost(i, j, int(cell))
status = lsa.solve()
assert status == lsa.OPTIMAL, status

total = lsa.optimal_cost()
chosen = [jobs[lsa.right_mate(i)] for i in range(len(technicians))]
print(f"arcs={lsa.num_arcs()} total={total} assignment={chosen}")
with open("total_minutes.txt", "w") as f:
    f.write(f"{total}\n")
with open("assignment.txt", "w") as f:
    f.write(",".join(chosen) + "\n")
