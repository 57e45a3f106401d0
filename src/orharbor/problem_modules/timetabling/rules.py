"""The timetabling instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import (
    InvalidInstance,
    array,
    instance_object,
    integer,
    known,
    record,
    text,
    unique_ids,
)

__all__ = ["InvalidInstance", "validate_instance"]


def validate_instance(instance) -> dict:
    """``instance`` if it is a timetabling instance; else InvalidInstance naming the first broken rule."""
    inst = instance_object(
        instance, "timetabling", ("days", "periods_per_day", "courses", "rooms", "curricula", "unavailability")
    )
    days = integer(inst["days"], "days", lo=1)
    ppd = integer(inst["periods_per_day"], "periods_per_day", lo=1)
    courses = array(inst["courses"], "courses")
    for i, course in enumerate(courses):
        where = f"courses[{i}]"
        record(course, where, ("id", "teacher", "lectures", "min_working_days", "students"))
        text(course["teacher"], f"{where}.teacher")
        integer(course["lectures"], f"{where}.lectures", lo=1)
        integer(course["min_working_days"], f"{where}.min_working_days", lo=0)
        integer(course["students"], f"{where}.students", lo=0)
    course_ids = unique_ids(courses, "courses")
    rooms = array(inst["rooms"], "rooms")
    if courses and not rooms:
        raise InvalidInstance("rooms: expected at least one room")
    for i, room in enumerate(rooms):
        record(room, f"rooms[{i}]", ("id", "capacity"))
        integer(room["capacity"], f"rooms[{i}].capacity", lo=0)
    unique_ids(rooms, "rooms")
    curricula = array(inst["curricula"], "curricula")
    for i, curriculum in enumerate(curricula):
        record(curriculum, f"curricula[{i}]", ("id", "courses"))
        for k, course in enumerate(array(curriculum["courses"], f"curricula[{i}].courses")):
            known(course, f"curricula[{i}].courses[{k}]", course_ids, "course")
    unique_ids(curricula, "curricula")
    closed: dict[str, set[tuple[int, int]]] = {}
    for k, item in enumerate(array(inst["unavailability"], "unavailability")):
        where = f"unavailability[{k}]"
        array(item, where, 3)
        course = known(item[0], f"{where}[0]", course_ids, "course")
        day = integer(item[1], f"{where}[1]", lo=0, hi=days - 1)
        period = integer(item[2], f"{where}[2]", lo=0, hi=ppd - 1)
        closed.setdefault(course, set()).add((day, period))
    for i, course in enumerate(courses):
        free = days * ppd - len(closed.get(course["id"], ()))
        if course["lectures"] > free:
            raise InvalidInstance(
                f"courses[{i}]: course {course['id']} has {course['lectures']} lectures but only "
                f"{free} periods it is available in: no timetable exists"
            )
    total = sum(course["lectures"] for course in courses)
    if total > len(rooms) * days * ppd:
        raise InvalidInstance(
            f"courses: {total} lectures do not fit in {len(rooms)} rooms x {days * ppd} periods: no timetable exists"
        )
    return inst
