"""The timetabling problem class: the ITC2007 design and files, every hard rule and penalty, baseline, reference.

The properties every class shares (contract, statement, golden digests, round trips, broken files,
baseline feasibility) are checked in tests/test_contract.py.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.timetabling import generator as gen_module
from orharbor.problem_modules.timetabling.formats import read_solution, write_solution
from orharbor.problem_modules.timetabling.generator import build
from orharbor.problem_modules.timetabling.verify import WEIGHTS, penalties
from orharbor.verifiers.strict import Infeasible

from text_edits import line_edit as _edit

tt = problem_modules.get("timetabling")
DATA_KEYS = ("name", "days", "periods_per_day", "courses", "rooms", "curricula", "unavailability")
#: The published ITC2007 files, under instances/ (the ``folder`` and ``published`` fixtures).
FOLDER = "timetabling"


@pytest.fixture(scope="module")
def comp01(folder) -> dict:
    return tt.read(folder / "comp01.ctt")


@pytest.fixture(scope="module")
def comp01_solution(folder) -> dict:
    return read_solution(folder / "comp01.ctt.sol")


def test_weights_and_statement_agree():
    """The competition's weights, as the verifier applies them and the statement states them."""
    assert WEIGHTS == {"room_capacity": 1, "min_working_days": 5, "curriculum_compactness": 2, "room_stability": 1}
    text = tt.statement()
    for word in (
        "Room occupancy",
        "Conflicts",
        "Availability",
        "1 point per student",
        "5 points per day",
        "2 points per isolated lecture",
        "minus 1",
    ):
        assert word in text, word
    assert "stop_after_first_solution" in tt.BASELINE


# ----------------------------------------------------------------- generator


@pytest.mark.parametrize("size", tt.SIZES)
def test_generate_follows_the_design(size):
    """Counts, ranges and the recorded per-seed parameters agree with the instance."""
    for seed in (0, 5):
        inst = tt.generate(seed, size)
        gen = inst["generator"]
        n = gen_module.COURSES[size]
        assert inst["name"] == f"timetabling-{size}-s{seed}" and len(inst["courses"]) == n
        assert (gen["seed"], gen["size"], gen["version"]) == (seed, size, 1)
        shape = (inst["days"], inst["periods_per_day"])
        assert shape in gen_module._per_size(gen_module.SHAPES, size) and shape == (gen["days"], gen["periods_per_day"])
        periods = inst["days"] * inst["periods_per_day"]
        lectures = [c["lectures"] for c in inst["courses"]]
        assert all(1 <= k <= gen_module._per_size(gen_module.MAX_LECTURES, size) for k in lectures)
        assert sum(lectures) == gen["lectures"] and len(inst["rooms"]) == gen["rooms"]
        assert gen["occupancy"] == round(sum(lectures) / (gen["rooms"] * periods), 3) <= 1
        assert (size != "c6" and gen["rooms"] >= 2) or 2 <= gen["rooms"] <= 3
        assert all(10 <= r["capacity"] <= 250 for r in inst["rooms"])
        assert all(1 <= c["min_working_days"] <= min(c["lectures"], inst["days"]) for c in inst["courses"])
        assert len(inst["curricula"]) == gen["n_cohorts"] + gen["n_extra_curricula"]
        assert len({c["teacher"] for c in inst["courses"]}) == gen["n_teachers"] <= n
        assert len(inst["unavailability"]) == gen["n_unavailable"] <= n * periods * gen["unavailability_percent"] // 100
        for key, (low, high) in (
            ("lecture_percent", gen_module.LECTURE_PERCENT),
            ("occupancy_percent", gen_module.OCCUPANCY_PERCENT),
            ("teacher_percent", gen_module.TEACHER_PERCENT),
            ("unavailability_percent", gen_module.UNAVAILABILITY_PERCENT),
        ):
            assert low <= gen[key] <= high, key
        ids = {c["id"] for c in inst["courses"]}
        assert all(set(q["courses"]) <= ids for q in inst["curricula"])


@pytest.mark.parametrize("size", tt.SIZES)
def test_generated_instances_are_feasible_by_construction(size):
    """The hidden timetable build() returns passes the verifier, for many seeds."""
    for seed in range(12):
        inst, hidden = build(seed, size)
        assert inst == tt.generate(seed, size)
        assert tt.evaluate(inst, hidden) >= 0
        assert len(hidden["assignments"]) == inst["generator"]["lectures"]


def test_week_shapes_and_room_counts_vary():
    """The week shapes, room counts and unavailabilities vary with the seed."""
    gens = [tt.generate(s, "c60")["generator"] for s in range(40)]
    assert {(g["days"], g["periods_per_day"]) for g in gens} == set(gen_module.SHAPES["default"])
    assert len({g["rooms"] for g in gens}) > 5 and len({g["n_unavailable"] for g in gens}) > 20


# ------------------------------------------------------------------- formats


def test_comp01_round_trips_byte_for_byte(published, folder, comp01):
    """write(read(comp01.ctt)) reproduces the published CRLF file exactly, from a path, a string path or text."""
    text = published("comp01.ctt")
    assert "\r\n" in text and tt.write(comp01) == text
    assert comp01["layout"] == {"newline": "\r\n"}  # otherwise the published file is in canonical layout
    assert tt.read(str(folder / "comp01.ctt")) == comp01
    assert tt.write(tt.read(text, "ctt")) == text
    assert tt.write(tt.read(text.replace("\r\n", "\n"))) == text.replace("\r\n", "\n")


def test_comp01_data(comp01):
    """comp01 reads as published."""
    assert comp01["name"] == "Fis0506-1" and comp01["source"] == "comp01.ctt"
    assert (comp01["days"], comp01["periods_per_day"]) == (5, 6)
    assert len(comp01["courses"]) == 30 and len(comp01["rooms"]) == 6 and len(comp01["curricula"]) == 14
    assert comp01["courses"][0] == {
        "id": "c0001",
        "teacher": "t000",
        "lectures": 6,
        "min_working_days": 4,
        "students": 130,
    }
    assert comp01["courses"][-1]["id"] == "c0072" and sum(c["lectures"] for c in comp01["courses"]) == 160
    assert len({c["teacher"] for c in comp01["courses"]}) == 24
    assert comp01["rooms"][0] == {"id": "B", "capacity": 200} and comp01["rooms"][2] == {"id": "E", "capacity": 9}
    assert comp01["curricula"][0] == {"id": "q000", "courses": ["c0001", "c0002", "c0004", "c0005"]}
    assert comp01["curricula"][12] == {"id": "q012", "courses": ["c0004"]}
    assert len(comp01["unavailability"]) == 53
    assert comp01["unavailability"][0] == ["c0001", 4, 0] and comp01["unavailability"][-1] == ["c0071", 4, 2]


def test_comp01_solution_round_trips(published, comp01_solution):
    """The published .sol file (LF, no final newline) reads into the solution JSON and writes back exactly."""
    text = published("comp01.ctt.sol")
    assert len(comp01_solution["assignments"]) == 160
    assert comp01_solution["assignments"][0] == ["c0001", "B", 3, 3]
    assert comp01_solution["assignments"][-1] == ["c0072", "E", 2, 4]
    assert write_solution(comp01_solution, final_newline=False) == text
    assert read_solution(write_solution(comp01_solution, newline="\r\n")) == comp01_solution
    assert write_solution(comp01_solution).endswith("2 4\n")


def test_unusual_layouts_keep_the_data():
    """Odd spacing is kept line by line; a layout that cannot be replayed is dropped, the data kept."""
    inst = tt.generate(0, "c6")
    text = tt.write(inst)
    spaced = text.replace("ROOMS:\nr01\t", "ROOMS:\nr01    ", 1).replace("END.\n", "END.\n\n\n")
    back = tt.read(spaced)
    room_line = text.split("\n").index("ROOMS:") + 2
    assert back["layout"] == {"tail": "\n\n\n", "lines": [[room_line, f"r01    {inst['rooms'][0]['capacity']}"]]}
    assert tt.write(back) == spaced and {k: back[k] for k in DATA_KEYS} == {k: inst[k] for k in DATA_KEYS}
    loose = text.replace("\nCOURSES:", "\n\n\nCOURSES:")
    back = tt.read(loose)
    assert "layout" not in back and {k: back[k] for k in DATA_KEYS} == {k: inst[k] for k in DATA_KEYS}


@pytest.fixture(scope="module")
def comp01_lf(published) -> str:
    """comp01.ctt with LF line ends, which the broken-file cases edit."""
    return published("comp01.ctt").replace("\r\n", "\n")


CTT_SHAPE = "('course teacher lectures min_working_days students')"
BROKEN = [
    ("wrong key", _edit(2, "Curses: 30"), r"^<text>:2: expected the header line 'Courses: \.\.\.', got 'Curses: 30'$"),
    ("not a count", _edit(3, "Rooms: six"), r"^<text>:3: expected Rooms to be an integer >= 1, got 'six'$"),
    ("zero days", _edit(4, "Days: 0"), r"^<text>:4: expected Days to be an integer >= 1, got '0'$"),
    ("name with blanks", _edit(1, "Name: a b"), r"^<text>:1: expected one name token without blanks, got 'a b'$"),
    ("section keyword", _edit(9, "COURSE:"), r"^<text>:9: expected the section COURSES:, got 'COURSE:'$"),
    (
        "short course",
        _edit(10, "c0001 t000 6 4"),
        rf"^<text>:10: expected course 1 of 30 {re.escape(CTT_SHAPE)}, got 4 tokens: 'c0001 t000 6 4'$",
    ),
    (
        "lectures not int",
        _edit(10, "c0001 t000 six 4 130"),
        r"^<text>:10: expected the lectures of course c0001 \(an integer\), got 'six'$",
    ),
    (
        "no lectures",
        _edit(10, "c0001 t000 0 4 130"),
        r"^<text>:10: the lectures of course c0001 must be between 1 and 30, got 0$",
    ),
    (
        "too many lectures",
        _edit(10, "c0001 t000 31 4 130"),
        r"^<text>:10: the lectures of course c0001 must be between 1 and 30, got 31$",
    ),
    (
        "negative students",
        _edit(10, "c0001 t000 6 4 -5"),
        r"^<text>:10: the students of course c0001 must be >= 0, got -5$",
    ),
    ("duplicate course", _edit(11, "c0001 t001 6 4 75"), r"^<text>:11: course c0001 is listed twice$"),
    (
        "count too big",
        _edit(2, "Courses: 31"),
        rf"^<text>:40: expected course 31 of 31 {re.escape(CTT_SHAPE)}, got a blank line$",
    ),
    ("count too small", _edit(2, "Courses: 29"), r"^<text>:39: expected the section ROOMS:, got 'c0072 t003 6 4 9'$"),
    ("room capacity", _edit(42, "B\t-1"), r"^<text>:42: the capacity of room B must be >= 0, got -1$"),
    ("room tokens", _edit(42, "B"), r"^<text>:42: expected room 1 of 6 \('room capacity'\), got 1 tokens: 'B'$"),
    ("duplicate room", _edit(43, "B\t100"), r"^<text>:43: room B is listed twice$"),
    (
        "curriculum count",
        _edit(50, "q000  5 c0001 c0002 c0004 c0005 "),
        r"^<text>:50: curriculum q000 announces 5 courses, got 4$",
    ),
    (
        "curriculum unknown course",
        _edit(50, "q000  4 c0001 c0002 c0004 c9999 "),
        r"^<text>:50: curriculum q000: unknown course c9999$",
    ),
    (
        "curriculum repeats a course",
        _edit(50, "q000  4 c0001 c0002 c0001 c0005 "),
        r"^<text>:50: curriculum q000 lists course c0001 twice$",
    ),
    (
        "curriculum without count",
        _edit(50, "q000"),
        r"^<text>:50: expected the number of courses of curriculum q000, got the end of the line$",
    ),
    ("unavailable unknown course", _edit(66, "c9999 4 0"), r"^<text>:66: unknown course c9999$"),
    ("unavailable day", _edit(66, "c0001 5 0"), r"^<text>:66: the day must be between 0 and 4, got 5$"),
    ("unavailable period", _edit(66, "c0001 4 x"), r"^<text>:66: expected the period \(an integer\), got 'x'$"),
    ("unavailable twice", _edit(67, "c0001 4 0"), r"^<text>:67: course c0001 day 4 period 0 is listed twice$"),
    ("missing END", _edit(120, None), r"^<text>:120: expected END\., got the end of the file$"),
    ("not END", _edit(120, "END"), r"^<text>:120: expected END\., got 'END'$"),
]


@pytest.mark.parametrize(("label", "make", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_are_rejected(comp01_lf, label, make, message):
    """Each defect raises ValueError with file:line and what was expected."""
    with pytest.raises(ValueError, match=message):
        tt.read(make(comp01_lf))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("c0001 B 3\n", r"^<text>:1: expected 'course room day period', got 'c0001 B 3'$"),
        ("c0001 B 3 3\nc0001 B 3 3 1\n", r"^<text>:2: expected 'course room day period', got 'c0001 B 3 3 1'$"),
        ("c0001 B x 3\n", r"^<text>:1: expected the day as an integer >= 0, got 'x'$"),
        ("c0001 B 3 -1\n", r"^<text>:1: expected the period as an integer >= 0, got '-1'$"),
    ],
)
def test_broken_solution_files_are_rejected(text, message):
    """A .sol line that is not 'course room day period' names its line."""
    with pytest.raises(ValueError, match=message):
        read_solution(text)


# ------------------------------------------------------------------ verifier


def brute_force_penalty(instance: dict, assignments: list) -> int:
    """The ITC2007 track 3 penalty computed the slow, obvious way (independent of verify.py)."""
    days, ppd = instance["days"], instance["periods_per_day"]
    room_of = {(c, d, p): r for c, r, d, p in assignments}
    capacity = {r["id"]: r["capacity"] for r in instance["rooms"]}
    total = 0
    for c in instance["courses"]:
        mine = [(d, p, r) for (cc, d, p), r in room_of.items() if cc == c["id"]]
        total += sum(max(0, c["students"] - capacity[r]) for _, _, r in mine)
        total += 5 * max(0, c["min_working_days"] - len({d for d, _, _ in mine}))
        total += len({r for _, _, r in mine}) - 1
    for q in instance["curricula"]:

        def busy(d, p):
            return 0 <= p < ppd and any((c, d, p) in room_of for c in q["courses"])

        for d in range(days):
            for p in range(ppd):
                if busy(d, p) and not busy(d, p - 1) and not busy(d, p + 1):
                    total += 2
    return total


def test_evaluate_comp01_published_solution(comp01, comp01_solution):
    """The published comp01 solution scores 5 (the best known), and so does the brute-force count."""
    assert tt.evaluate(comp01, comp01_solution) == brute_force_penalty(comp01, comp01_solution["assignments"]) == 5
    assert penalties(comp01, comp01_solution["assignments"]) == {
        "room_capacity": 4,
        "min_working_days": 0,
        "curriculum_compactness": 0,
        "room_stability": 1,
    }


def _tiny() -> dict:
    """Two days of three periods, four courses, two rooms, two curricula, one unavailability."""
    course = lambda cid, teacher, k, mwd, students: {
        "id": cid,
        "teacher": teacher,
        "lectures": k,  # noqa: E731
        "min_working_days": mwd,
        "students": students,
    }
    return {
        "problem": "timetabling",
        "name": "tiny",
        "days": 2,
        "periods_per_day": 3,
        "courses": [
            course("A", "t1", 2, 2, 30),
            course("B", "t1", 1, 1, 10),
            course("C", "t2", 2, 1, 50),
            course("D", "t3", 1, 1, 5),
        ],
        "rooms": [{"id": "R1", "capacity": 40}, {"id": "R2", "capacity": 20}],
        "curricula": [{"id": "Q1", "courses": ["A", "C"]}, {"id": "Q2", "courses": ["C", "D"]}],
        "unavailability": [["D", 1, 2]],
    }


GOOD = [
    ["A", "R1", 0, 0],
    ["A", "R1", 1, 0],
    ["B", "R2", 0, 1],
    ["C", "R1", 0, 1],
    ["C", "R2", 0, 2],
    ["D", "R2", 1, 1],
]


def _with(k: int, entry) -> dict:
    rows = [list(a) for a in GOOD]
    rows[k] = entry
    return {"assignments": rows}


def test_evaluate_tiny_by_hand():
    """Capacity 10 + 30 (C in R1 and R2), compactness 2 x 2 (A on day 1, D on day 1), stability 1 (C)."""
    inst = _tiny()
    assert penalties(inst, GOOD) == {
        "room_capacity": 40,
        "min_working_days": 0,
        "curriculum_compactness": 4,
        "room_stability": 1,
    }
    assert tt.evaluate(inst, {"assignments": GOOD}) == 45 == brute_force_penalty(inst, GOOD)
    assert tt.evaluate(inst, {"assignments": GOOD[::-1]}) == 45  # any order
    # A twice on day 0 only: 5 points for the missing second day
    moved = _with(1, ["A", "R1", 0, 2])["assignments"]
    moved[4] = ["C", "R2", 1, 0]
    assert penalties(inst, moved)["min_working_days"] == 5
    assert tt.evaluate(inst, {"assignments": moved}) == brute_force_penalty(inst, moved)


def test_compactness_stops_at_the_end_of_a_day():
    """The last period of day 0 and the first of day 1 are not adjacent."""
    inst = _tiny()
    inst["curricula"] = [{"id": "Q", "courses": ["A"]}]
    rows = [
        ["A", "R1", 0, 2],
        ["A", "R1", 1, 0],
        ["B", "R2", 0, 0],
        ["C", "R1", 0, 0],
        ["C", "R2", 1, 2],
        ["D", "R2", 1, 1],
    ]
    assert penalties(inst, rows)["curriculum_compactness"] == 4
    rows[1] = ["A", "R1", 0, 1]
    assert penalties(inst, rows)["curriculum_compactness"] == 0


HARD = [
    (
        "unavailable",
        _with(5, ["D", "R2", 1, 2]),
        r"^solution\.assignments\[5\]: course D is unavailable on day 1 period 2 \(scheduled in room R2\)$",
    ),
    (
        "room clash",
        _with(3, ["C", "R2", 0, 1]),
        r"^solution\.assignments\[3\]: room R2 holds two lectures on day 0 period 1 \(courses B and C\)$",
    ),
    (
        "teacher clash",
        _with(2, ["B", "R2", 0, 0]),
        r"^solution\.assignments\[2\]: teacher t1 teaches two lectures on day 0 period 0 \(courses A and B, room R2\)$",
    ),
    (
        "curriculum clash",
        _with(3, ["C", "R2", 0, 0]),
        r"^solution\.assignments\[3\]: curriculum Q1 has two lectures on day 0 period 0 \(courses A and C, room R2\)$",
    ),
    (
        "course twice in a period",
        _with(1, ["A", "R2", 0, 0]),
        r"^solution\.assignments\[1\]: course A has two lectures on day 0 period 0 \(rooms R1 and R2\)$",
    ),
    (
        "lecture missing",
        {"assignments": GOOD[:5]},
        r"^course D has 0 of its 1 lectures scheduled \(every lecture must be scheduled\)$",
    ),
    (
        "lecture too many",
        {"assignments": GOOD + [["A", "R2", 1, 2]]},
        r"^solution\.assignments\[6\]: course A gets more than its 2 lectures \(this one in room R2 on day 1 period 2\)$",
    ),
    (
        "lecture replaced",
        _with(0, ["B", "R1", 1, 2]),
        r"^solution\.assignments\[2\]: course B gets more than its 1 lectures \(this one in room R2 on day 0 period 1\)$",
    ),
]


@pytest.mark.parametrize(("label", "solution", "message"), HARD, ids=[h[0] for h in HARD])
def test_evaluate_rejects_hard_violations(label, solution, message):
    """Every broken hard constraint is named with its course, room, day and period."""
    with pytest.raises(Infeasible, match=message):
        tt.evaluate(_tiny(), solution)


def test_evaluate_rejects_violations_of_the_real_solution(comp01, comp01_solution):
    """Moving the first lecture of the published solution (to the end of the list) breaks the rule it should."""
    rows = [list(a) for a in comp01_solution["assignments"]]
    assert rows[0] == ["c0001", "B", 3, 3]
    for new, message in [
        (
            ["c0001", "B", 4, 0],
            r"^solution\.assignments\[159\]: course c0001 is unavailable on day 4 period 0 "
            r"\(scheduled in room B\)$",
        ),
        (
            ["c0001", "C", 1, 1],
            r"^solution\.assignments\[159\]: course c0001 has two lectures on day 1 period 1 "
            r"\(rooms B and C\)$",
        ),
        (
            ["c0001", "S", 1, 4],
            r"^solution\.assignments\[159\]: room S holds two lectures on day 1 period 4 "
            r"\(courses c0067 and c0001\)$",
        ),
        (
            ["c0001", "F", 1, 5],
            r"^solution\.assignments\[159\]: curriculum q000 has two lectures on day 1 period 5 "
            r"\(courses c0002 and c0001, room F\)$",
        ),
    ]:
        with pytest.raises(Infeasible, match=message):
            tt.evaluate(comp01, {"assignments": rows[1:] + [new]})
    assert tt.evaluate(comp01, {"assignments": rows[1:] + rows[:1]}) == 5


HOSTILE = [
    ("not a dict", [GOOD], r"^solution: expected a JSON object, got list$"),
    ("null", None, r"^solution: expected a JSON object, got null$"),
    ("missing key", {}, r"^solution: missing key 'assignments'$"),
    ("extra key", {"assignments": GOOD, "penalty": 0}, r"^solution: unexpected key 'penalty'"),
    ("assignments not a list", {"assignments": {"A": 1}}, r"^solution\.assignments: expected a list, got object$"),
    ("entry not a list", _with(0, "A R1 0 0"), r"^solution\.assignments\[0\]: expected a list, got string$"),
    ("entry too short", _with(0, ["A", "R1", 0]), r"^solution\.assignments\[0\]: expected 4 items, got 3$"),
    ("entry too long", _with(0, ["A", "R1", 0, 0, 0]), r"^solution\.assignments\[0\]: expected 4 items, got 5$"),
    (
        "course not a string",
        _with(0, [1, "R1", 0, 0]),
        r"^solution\.assignments\[0\]\[0\]: expected a course id \(a string\), got integer 1$",
    ),
    ("unknown course", _with(0, ["Z", "R1", 0, 0]), r"^solution\.assignments\[0\]\[0\]: unknown course 'Z'$"),
    ("huge course id", _with(0, ["x" * 10**6, "R1", 0, 0]), r"^solution\.assignments\[0\]\[0\]: unknown course 'xxx"),
    (
        "room null",
        _with(0, ["A", None, 0, 0]),
        r"^solution\.assignments\[0\]\[1\]: expected a room id \(a string\), got null",
    ),
    ("unknown room", _with(0, ["A", "R9", 0, 0]), r"^solution\.assignments\[0\]\[1\]: unknown room 'R9'$"),
    (
        "room as list",
        _with(0, ["A", ["R1"], 0, 0]),
        r"^solution\.assignments\[0\]\[1\]: expected a room id \(a string\), got list",
    ),
    ("bool day", _with(0, ["A", "R1", False, 0]), r"^solution\.assignments\[0\]\[2\]: expected an integer, got bool"),
    (
        "float period",
        _with(0, ["A", "R1", 0, 0.0]),
        r"^solution\.assignments\[0\]\[3\]: expected an integer, got float 0\.0$",
    ),
    (
        "nan day",
        _with(0, ["A", "R1", float("nan"), 0]),
        r"^solution\.assignments\[0\]\[2\]: expected an integer, got float nan$",
    ),
    (
        "string day",
        _with(0, ["A", "R1", "0", 0]),
        r"^solution\.assignments\[0\]\[2\]: expected an integer, got string '0'$",
    ),
    ("huge day", _with(0, ["A", "R1", 10**30, 0]), r"^solution\.assignments\[0\]\[2\]: integer .* is out of range$"),
    ("day too big", _with(0, ["A", "R1", 2, 0]), r"^solution\.assignments\[0\]\[2\]: 2 is above the maximum 1$"),
    ("negative period", _with(0, ["A", "R1", 0, -1]), r"^solution\.assignments\[0\]\[3\]: -1 is below the minimum 0$"),
    ("period too big", _with(0, ["A", "R1", 0, 3]), r"^solution\.assignments\[0\]\[3\]: 3 is above the maximum 2$"),
    (
        "duplicate entry",
        {"assignments": [GOOD[0]] + GOOD},
        r"^solution\.assignments\[1\]: course A has two lectures on day 0 period 0 \(rooms R1 and R1\)$",
    ),
    ("empty", {"assignments": []}, r"^course A has 0 of its 2 lectures scheduled"),
    (
        "many copies",
        {"assignments": [GOOD[0]] * 10**5},
        r"^solution\.assignments\[1\]: course A has two lectures on day 0 period 0",
    ),
]


@pytest.mark.parametrize(("label", "solution", "message"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_evaluate_rejects_hostile_solutions(label, solution, message):
    """Malformed answers raise Infeasible naming the place, never another exception."""
    with pytest.raises(Infeasible, match=message):
        tt.evaluate(_tiny(), solution)


def test_evaluate_fuzz_never_crashes_unexpectedly():
    """Random corruptions of a feasible answer give a penalty or Infeasible, nothing else."""
    inst, hidden = build(1, "c30")
    rng = random.Random(0)
    junk = [None, True, -1, 1.5, "x", "c0001", "r01", [], {}, [[]], 10**20, float("nan"), 4, 5]
    rows = hidden["assignments"]
    for _ in range(400):
        sol = json.loads(json.dumps(hidden))
        k = rng.randrange(len(rows))
        choice = rng.randrange(4)
        if choice == 0:
            sol["assignments"][k][rng.randrange(4)] = rng.choice(junk)
        elif choice == 1:
            sol["assignments"][k] = list(rows[rng.randrange(len(rows))])
        elif choice == 2:
            sol["assignments"][k][2:] = [rng.randrange(inst["days"]), rng.randrange(inst["periods_per_day"])]
        else:
            sol["assignments"][k] = rng.choice(junk)
        try:
            assert tt.evaluate(inst, sol) >= 0
        except Infeasible:
            pass


# ------------------------------------------------------------------ baseline


def test_baseline_fills_the_rooms_in_index_order(comp01):
    """On comp01 the baseline is the same twice, above the optimum 5, room B filled first in every period."""
    sol = tt.baseline(comp01)
    assert sol == tt.baseline(comp01) and tt.evaluate(comp01, sol) > 5
    first_room = {(d, p): r for _, r, d, p in sol["assignments"] if r == "B"}
    assert len(first_room) == len({(d, p) for _, _, d, p in sol["assignments"]})  # room B is filled first


# ----------------------------------------------------------------- reference


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_the_optimum_of_the_smoke_size_is_far_below_the_baseline(seed):
    """CP-SAT proves the smoke size optimal (in well under a second; the limit leaves ample slack),
    at less than half the baseline's penalty: the reward has room to spread.

    The optimum is asserted when CP-SAT reports its proof; cut off by its limit (a machine loaded
    past all reason), only its bound is known to lie below the optimum, and so below half the baseline.
    """
    inst = tt.generate(seed, "c6")
    sol, meta = tt.reference(inst, time_limit_s=60.0, workers=1)
    naive = tt.evaluate(inst, tt.baseline(inst))
    assert tt.evaluate(inst, sol) == meta["objective"] and 0 <= meta["bound"] <= meta["objective"] <= naive
    assert 2 * meta["bound"] < naive
    if meta["status"] == "OPTIMAL":
        assert meta["objective"] == meta["bound"] and 2 * meta["objective"] < naive
    assert meta["solver"] == "ortools-cp-sat" and meta["version"]
    assert (meta["time_limit_s"], meta["workers"], meta["seed"]) == (60.0, 1, 0)
    json.dumps(meta)


@pytest.mark.parametrize(("seed", "size"), [(0, "c30"), (1, "c60")])
@pytest.mark.slow
def test_reference_is_no_worse_than_the_baseline(seed, size):
    """On larger instances, at any speed, the reference is feasible, matches its meta and never loses to naive."""
    inst = tt.generate(seed, size)
    sol, meta = tt.reference(inst, time_limit_s=2.0, workers=1)
    objective = tt.evaluate(inst, sol)
    assert objective == meta["objective"] and 0 <= meta["bound"] <= objective
    assert meta["status"] in ("OPTIMAL", "FEASIBLE", "FEASIBLE_HINT")
    assert objective <= tt.evaluate(inst, tt.baseline(inst))


@pytest.mark.slow
def test_reference_on_comp01(comp01):
    """A short run on comp01 is feasible, never below the proven optimum 5 nor above the baseline."""
    sol, meta = tt.reference(comp01, time_limit_s=2.0, workers=1)
    assert 5 <= tt.evaluate(comp01, sol) == meta["objective"] <= tt.evaluate(comp01, tt.baseline(comp01))
    assert meta["bound"] <= 5


def test_reference_falls_back_when_out_of_time():
    """At a tiny limit the answer is still feasible: the baseline's periods with best-fit rooms."""
    inst = tt.generate(0, "c90")
    sol, meta = tt.reference(inst, time_limit_s=0.001, workers=1)
    assert tt.evaluate(inst, sol) == meta["objective"] <= tt.evaluate(inst, tt.baseline(inst))
    assert meta["status"] in ("FEASIBLE", "FEASIBLE_HINT") and meta["bound"] == 0
