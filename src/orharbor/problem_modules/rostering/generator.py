"""Shift scheduling instances after the design of the Curtois & Qu benchmark (schedulingbenchmarks.org).

Curtois, T. and Qu, R. (2014) "Computational results on new staff scheduling
benchmark instances", technical report, ASAP group, University of Nottingham.
Its Instances 1-24 run from 14 days, 8 staff and 1 shift type to 364 days, 150
staff and 32 shift types. What the published files show, and what is drawn here
per seed (every choice recorded under ``instance["generator"]``):

* Shift types start at distinct half hours and last 480 minutes (``lengths``
  ``"uniform"``) or 360, 480 or 600 minutes (``"mixed"``); shift ``t`` may not
  follow shift ``s`` on the next day when the rest between them is below a
  minimum of 11 to 14 hours (in Instance3: D may not be followed by E, L by E
  or D). A shift may always follow itself.
* Staff belong to 1 to 3 contracts: the first full time, the others full or
  part time. Minutes are counted in units of the mean shift length (480 when
  lengths are uniform): a full-time contract allows 4.5 to 5 shifts a week at
  most (5.5 with three weekends in four) and 1 to 1.5 fewer at least
  (Instance1: 4320 and 3360 minutes in two weeks), a part-time one 2 to 3 at
  most and 1 to 1.5 fewer at least (Instance2: 2160 and 1200). Maximum
  consecutive shifts 5-6 (part time 4-5), minimum consecutive shifts 1-3,
  minimum consecutive days off 1-3 but no more than lets ``max`` shifts then
  that many days off reach the weekly maximum, maximum working weekends a half
  or three quarters of the weeks, rounded up (Instances 1-3: 1 in 2).
* Each employee may be barred from a shift type (maximum 0) or limited to 1 to
  a quarter of the horizon's shifts of it, with probabilities of 0% to 20%
  each drawn per seed, keeping at least one unlimited type (Instance3:
  ``L=0``, ``L=5``).
* Days off: 2% to 8% of the days per employee (at least one). On-requests cover
  10% to 25% of the employee-days and off-requests 3% to 10%, in blocks of 1
  to 5 consecutive days for one shift type the employee may work, weights 1-3,
  never on a day off and never two requests on one employee-day.
* Cover: the total requirement is 95% to 105% of the staff's maximum number of
  shifts (Instances 1-3: 98% to 100%), shared among shift types by random
  weights 1-4, weekend days scaled by 80% to 120% (weekends are as busy as
  weekdays, which the weekend limits make costly), each day and shift type by
  a noise of 70% to 130%; the weights for under- and over-cover are 100 and
  1, as in every published file.

Feasibility by construction: for every employee a witness line is built first,
work blocks of ``min..max`` consecutive shifts of one type between blocks of at
least the minimum days off, within the weekend allowance and the type limits;
its total minutes must fall within the contract (else it is redrawn, and after
:data:`ATTEMPTS` draws the contract's bounds of that employee are widened to it,
counted in ``witness_widened``), and the days off are drawn among its days off.
The witnesses are not part of the instance.

Sizes are ``d<days>e<staff>s<shift types>``: ``d7e4s1`` (smoke: one week, four
staff, one shift type), ``d14e8s1``, ``d14e14s2``, ``d14e20s3`` (the sizes of
Instances 1-3), ``d28e30s4`` (Instance 8), ``d42e45s6`` (Instance 15),
``d84e40s5`` (Instance 19), ``d182e100s8`` (Instance 21: six months, a
hundred staff) and ``d364e150s32`` (Instance 24: a year, 150 staff, 32 shift
types).
"""

from __future__ import annotations

import random
import re

from ..seeds import check_seed, size_seed
from .verify import weekends

SIZES = ("d7e4s1", "d14e8s1", "d14e14s2", "d14e20s3", "d28e30s4", "d42e45s6", "d84e40s5", "d182e100s8", "d364e150s32")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "d7e4s1"): "d0d040572bbdcf33e29bbac43c0a88d0aa3ec04ffc9590760a6befc766bdba54",
    (7, "d14e20s3"): "dd546df86ab779aa214bb97c6ff245af8b2dd95069c9046331cc7e7df61752e6",
    (123456789, "d84e40s5"): "88f2d16e91a4aaa8a30a4dad2ea1d3a7fb3f46d616006349a76e8674baa5ac6e",
}

#: Length of every shift type when lengths are uniform (the published files' 480 minutes).
STANDARD = 480
MIXED_LENGTHS = (360, 480, 600)
UNDER_WEIGHT, OVER_WEIGHT = 100, 1
#: Redraws of a witness line before the contract bounds of its employee are widened.
ATTEMPTS = 40


def parse_size(size: str) -> tuple[int, int, int]:
    """``"d14e8s1"`` -> (14, 8, 1); only the sizes of :data:`SIZES`."""
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(f"unknown rostering size {size!r}; valid sizes: {', '.join(SIZES)}")
    found = re.fullmatch(r"d(\d+)e(\d+)s(\d+)", size)
    assert found is not None  # every name of SIZES has this form
    days, staff, shifts = found.groups()
    return int(days), int(staff), int(shifts)


def letters(k: int) -> str:
    """Spreadsheet-style id: 0 -> A, 25 -> Z, 26 -> AA (the benchmark's staff ids)."""
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(65 + r) + out
    return out


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: the benchmark's design, structure drawn per seed."""
    return generate_with_witness(seed, size)[0]


def generate_with_witness(seed: int, size: str) -> tuple[dict, dict]:
    """``(instance, witness roster)``; the witness proves that the instance is feasible."""
    check_seed(seed, SIZES)
    days, n_staff, n_shifts = parse_size(size)
    derived = size_seed("rostering/", seed, size)
    rng = random.Random(derived)
    gen: dict = {"seed": seed, "size": size, "version": GENERATOR_VERSION, "prng_seed": derived}
    shifts = _shifts(rng, n_shifts, gen)
    unit = 30 * round(sum(s["minutes"] for s in shifts) / n_shifts / 30)
    gen["contract_unit_minutes"] = unit
    contracts = [_contract(rng, k, days, unit) for k in range(min(n_staff, rng.randint(1, 3)))]
    gen["contracts"] = contracts
    staff, witness = _staff(rng, days, n_staff, shifts, contracts, gen)
    on, off = _requests(rng, days, staff, gen)
    instance = {
        "problem": "rostering",
        "name": f"rostering-{size}-s{seed}",
        "horizon": days,
        "shifts": shifts,
        "staff": staff,
        "shift_on_requests": on,
        "shift_off_requests": off,
        "cover": _cover(rng, days, staff, shifts, gen),
        "generator": gen,
    }
    return instance, {"roster": witness}


def _shifts(rng: random.Random, n: int, gen: dict) -> list[dict]:
    """Shift types by start time, with lengths and the forbidden successions of a minimum rest."""
    starts = sorted(30 * slot for slot in rng.sample(range(48), n))
    mode = rng.choice(("uniform", "mixed"))
    lengths = [STANDARD if mode == "uniform" else rng.choice(MIXED_LENGTHS) for _ in range(n)]
    rest = 60 * rng.randint(11, 14)
    gen.update(shift_starts=starts, lengths=mode, min_rest_minutes=rest)
    ids = [f"S{k + 1}" for k in range(n)]
    return [
        {
            "id": ids[a],
            "minutes": lengths[a],
            "forbidden_next": [ids[b] for b in range(n) if 1440 + starts[b] - starts[a] - lengths[a] < rest],
        }
        for a in range(n)
    ]


def _contract(rng: random.Random, k: int, days: int, unit: int) -> dict:
    """One contract's limits (full time first); minutes in half-shift steps of ``unit / 2`` per week."""
    weeks = -(-days // 7)
    full = k == 0 or rng.random() < 0.5
    quarters = rng.choice((2, 3))
    if full:  # 5.5 shifts a week only with three weekends in four
        top, gap, cmax = rng.randint(9, 11 if quarters == 3 else 10), rng.randint(2, 3), rng.randint(5, 6)
    else:
        top, gap, cmax = rng.randint(4, 6), rng.randint(2, 3), rng.randint(4, 5)
    return {
        "kind": "full time" if full else "part time",
        "max_total_minutes": top * unit * days // 14,
        "min_total_minutes": max(1, top - gap) * unit * days // 14,
        "max_consecutive_shifts": cmax,
        "min_consecutive_shifts": rng.randint(1, 3),
        # cmax shifts then omin days off must reach the maximum rate of top / 2 shifts a week
        "min_consecutive_days_off": rng.randint(1, max(1, min(3, cmax * (14 - top) // top))),
        "max_weekends": max(1, -(-weeks * quarters // 4)),
    }


def _staff(rng, days, n_staff, shifts, contracts, gen) -> tuple[list[dict], dict]:
    """Employees (contract, shift access, witness line, days off) and the witness roster."""
    banned, limited = rng.randint(0, 20), rng.randint(0, 20)
    off_rate = rng.randint(2, 8)
    gen.update(banned_percent=banned, limited_percent=limited, days_off_percent=off_rate)
    contract_of, staff, witness, widened = [], [], {}, 0
    for e in range(n_staff):
        k = rng.randrange(len(contracts))
        contract_of.append(k)
        member = {"id": letters(e), "max_shifts": _access(rng, days, shifts, banned, limited)}
        member.update({key: value for key, value in contracts[k].items() if key != "kind"})
        line, ok = _witness(rng, days, shifts, member)
        if not ok:
            widened += 1
            worked = sum(s["minutes"] for s in shifts for v in line if v == s["id"])
            member["min_total_minutes"] = min(member["min_total_minutes"], worked)
            member["max_total_minutes"] = max(member["max_total_minutes"], worked)
        free = [d for d in range(days) if not line[d]]
        wanted = max(1, (days * off_rate + 50) // 100)
        member["days_off"] = sorted(rng.sample(free, min(wanted, len(free))))
        staff.append(member)
        witness[member["id"]] = line
    gen.update(contract_of=contract_of, witness_widened=widened)
    return staff, witness


def _access(rng, days: int, shifts: list[dict], banned: int, limited: int) -> dict:
    """Maximum shifts per type: barred (0), limited (a few) or the whole horizon; one type stays unlimited."""
    out = {}
    for s in shifts:
        roll = rng.randrange(100)
        out[s["id"]] = 0 if roll < banned else rng.randint(1, max(1, days // 4)) if roll < banned + limited else days
    if days not in out.values():
        out[rng.choice(shifts)["id"]] = days
    return out


def _witness(rng, days: int, shifts: list[dict], member: dict) -> tuple[list[str], bool]:
    """A feasible line for ``member`` (and whether its minutes met the contract without widening)."""
    lengths = {s["id"]: s["minutes"] for s in shifts}
    allowed = [s for s in lengths if member["max_shifts"][s] > 0]
    mean = sum(lengths[s] for s in allowed) / len(allowed)
    target = (member["min_total_minutes"] + member["max_total_minutes"]) / 2 / mean
    line: list[str] = []
    for _ in range(ATTEMPTS):
        line = _line(rng, days, member, allowed, target)
        worked = sum(lengths[v] for v in line if v)
        if member["min_total_minutes"] <= worked <= member["max_total_minutes"]:
            return line, True
    return line, False


def _line(rng, days: int, member: dict, allowed: list[str], target: float) -> list[str]:
    """Alternate blocks of days off (at least the minimum) and of shifts of one type (min..max long).

    Each block of days off is drawn around the length that spreads the shifts
    still wanted (``target`` in all) evenly over the days left.
    """
    cmin, cmax = member["min_consecutive_shifts"], member["max_consecutive_shifts"]
    omin = member["min_consecutive_days_off"]
    weekend_of = {d: w for w, pair in enumerate(weekends(days)) for d in pair}
    block = (cmin + cmax) / 2
    left = {s: member["max_shifts"][s] for s in allowed}
    line = [""] * days
    used: set[int] = set()
    done = 0
    d, working = 0, rng.random() < target / days
    while d < days:
        if not working:
            wanted = max(0.0, target - done)
            spread = (days - d - wanted) / (wanted / block + 1)
            d += max(omin, round(spread * (0.5 + rng.random())))
            working = True
            continue
        end, touched = None, used
        for length in range(rng.randint(cmin, cmax), cmin - 1, -1):
            stop = min(days, d + length)
            touched = used | {weekend_of[k] for k in range(d, stop) if k in weekend_of}
            if len(touched) <= member["max_weekends"]:
                end = stop
                break
        types = [s for s in allowed if end is not None and left[s] >= end - d]
        if not types:
            d += 1  # no block fits here: one more day off
            continue
        assert end is not None  # types is empty unless a block's end was found
        used = touched
        shift = rng.choice(types)
        left[shift] -= end - d
        line[d:end] = [shift] * (end - d)
        done += end - d
        d, working = end, False
    return line


def _requests(rng, days: int, staff: list[dict], gen: dict) -> tuple[list[dict], list[dict]]:
    """Shift-on and shift-off requests in blocks, one request per employee-day at most, none on a day off."""
    on_rate, off_rate = rng.randint(10, 25), rng.randint(3, 10)
    gen.update(on_request_percent=on_rate, off_request_percent=off_rate)
    taken = {(e, d) for e, m in enumerate(staff) for d in m["days_off"]}
    out = []
    for rate in (on_rate, off_rate):
        wanted = (len(staff) * days * rate + 50) // 100
        rows: list[tuple] = []
        for _ in range(20 * wanted):
            if len(rows) >= wanted:
                break
            e = rng.randrange(len(staff))
            start, length, weight = rng.randrange(days), rng.randint(1, 5), rng.randint(1, 3)
            shift = rng.choice([s for s, m in staff[e]["max_shifts"].items() if m > 0])
            for d in range(start, min(days, start + length)):
                if (e, d) not in taken and len(rows) < wanted:
                    taken.add((e, d))
                    rows.append((e, d, shift, weight))
        rows.sort(key=lambda r: (r[0], r[1]))
        out.append([{"employee": staff[e]["id"], "day": d, "shift": s, "weight": w} for e, d, s, w in rows])
    return out[0], out[1]


def _cover(rng, days: int, staff: list[dict], shifts: list[dict], gen: dict) -> list[dict]:
    """Requirements per day and shift type: a share of the staff's capacity, weekend factor, noise."""
    ratio, weekend = rng.randint(95, 105), rng.randint(80, 120)
    shares = [rng.randint(1, 4) for _ in shifts]
    gen.update(cover_ratio_percent=ratio, weekend_cover_percent=weekend, shift_cover_weights=shares)
    mean = sum(s["minutes"] for s in shifts) / len(shifts)
    capacity = sum(m["max_total_minutes"] for m in staff) / mean
    factor = [weekend / 100 if d % 7 >= 5 else 1.0 for d in range(days)]
    per_factor = capacity * ratio / 100 / sum(factor) / sum(shares)
    out = []
    for d in range(days):
        for s, share in zip(shifts, shares):
            need = round(per_factor * factor[d] * share * rng.randint(70, 130) / 100)
            out.append(
                {
                    "day": d,
                    "shift": s["id"],
                    "requirement": need,
                    "under_weight": UNDER_WEIGHT,
                    "over_weight": OVER_WEIGHT,
                }
            )
    return out
