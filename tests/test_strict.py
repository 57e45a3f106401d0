"""strict: shape checks for untrusted solution JSON, with messages naming the place."""

from __future__ import annotations

import math

import pytest

from orharbor.verifiers.strict import (
    MAX_ABS_INT,
    Infeasible,
    require_dict,
    require_int,
    require_list,
    require_number,
    short,
    type_name,
)


def test_infeasible_is_value_error():
    """Infeasible is a ValueError, so generic handlers still catch it."""
    assert issubclass(Infeasible, ValueError)


# ------------------------------------------------------------------ require_int


@pytest.mark.parametrize("value", [0, 7, -3, MAX_ABS_INT, -MAX_ABS_INT])
def test_require_int_accepts_integers(value):
    """True integers within MAX_ABS_INT are returned unchanged."""
    assert require_int(value, "x") == value


@pytest.mark.parametrize(
    "value, message",
    [
        (True, r"^s\[0\]: expected an integer, got bool True$"),
        (False, r"^s\[0\]: expected an integer, got bool False$"),
        (3.0, r"^s\[0\]: expected an integer, got float 3\.0$"),
        ("3", r"^s\[0\]: expected an integer, got string '3'$"),
        (None, r"^s\[0\]: expected an integer, got null None$"),
        ([3], r"^s\[0\]: expected an integer, got list \[3\]$"),
        ({"a": 3}, r"^s\[0\]: expected an integer, got object \{'a': 3\}$"),
        (10**16, r"^s\[0\]: integer 10000000000000000 is out of range$"),
        (-(10**16), r"^s\[0\]: integer -10000000000000000 is out of range$"),
        (MAX_ABS_INT + 1, r"^s\[0\]: integer \d+ is out of range$"),
    ],
    ids=["true", "false", "float", "string", "null", "list", "object", "1e16", "-1e16", "max+1"],
)
def test_require_int_rejects(value, message):
    """Bools, floats, other types and integers beyond MAX_ABS_INT are rejected by name."""
    with pytest.raises(Infeasible, match=message):
        require_int(value, "s[0]")


def test_require_int_lower_bound():
    """A value below lo names the value and the minimum; lo itself is accepted."""
    assert require_int(0, "start", lo=0) == 0
    with pytest.raises(Infeasible, match=r"^start: -1 is below the minimum 0$"):
        require_int(-1, "start", lo=0)


def test_require_int_upper_bound():
    """A value above hi names the value and the maximum; hi itself is accepted."""
    assert require_int(9, "machine", lo=0, hi=9) == 9
    with pytest.raises(Infeasible, match=r"^machine: 10 is above the maximum 9$"):
        require_int(10, "machine", lo=0, hi=9)


def test_require_int_range_checked_before_bounds():
    """A huge integer is reported as out of range, not compared with the bounds."""
    with pytest.raises(Infeasible, match=r"out of range"):
        require_int(10**20, "x", lo=0, hi=10)


def test_require_int_huge_value_message_is_short():
    """The message for a 5000-digit integer stays short (the value is summarised)."""
    with pytest.raises(Infeasible) as info:
        require_int(10**5000, "x")
    assert len(str(info.value)) < 100
    assert "digits" in str(info.value)


# ------------------------------------------------------------------ require_list


def test_require_list_accepts():
    """A list of the right length (or any length when none is given) is returned unchanged."""
    value = [1, 2, 3]
    assert require_list(value, "x") is value
    assert require_list(value, "x", 3) is value
    assert require_list([], "x", 0) == []


@pytest.mark.parametrize(
    "value, length, message",
    [
        ([1, 2], 3, r"^solution\.starts: expected 3 items, got 2$"),
        ([1, 2, 3, 4], 3, r"^solution\.starts: expected 3 items, got 4$"),
        ([], 1, r"^solution\.starts: expected 1 items, got 0$"),
        ((1, 2, 3), 3, r"^solution\.starts: expected a list, got tuple"),
        ({"0": 1}, None, r"^solution\.starts: expected a list, got object"),
        ("abc", None, r"^solution\.starts: expected a list, got string"),
        (None, None, r"^solution\.starts: expected a list, got null"),
    ],
    ids=["short", "long", "empty", "tuple", "object", "string", "null"],
)
def test_require_list_rejects(value, length, message):
    """A non-list, or a list of the wrong length, is rejected with the expected and actual shape."""
    with pytest.raises(Infeasible, match=message):
        require_list(value, "solution.starts", length)


# ------------------------------------------------------------------ require_dict


def test_require_dict_accepts_exact_keys():
    """An object with exactly the declared keys is returned unchanged."""
    value = {"starts": [], "extra": 1}
    assert require_dict(value, "solution", ("starts", "extra")) is value


@pytest.mark.parametrize(
    "value, message",
    [
        ({}, r"^solution: missing key 'starts'$"),
        ({"start": []}, r"^solution: missing key 'starts'$"),
        ({"starts": [], "makespan": 3}, r"^solution: unexpected key 'makespan' \(expected only \['starts'\]\)$"),
        ({"starts": [], "z": 1, "a": 2}, r"^solution: unexpected key 'a' "),
        ([["starts"]], r"^solution: expected a JSON object, got list$"),
        (None, r"^solution: expected a JSON object, got null$"),
    ],
    ids=["empty", "misspelt", "extra", "extra-sorted-first", "list", "null"],
)
def test_require_dict_rejects(value, message):
    """Missing and unexpected keys are named; a non-object is named by its JSON type."""
    with pytest.raises(Infeasible, match=message):
        require_dict(value, "solution", ("starts",))


def test_require_dict_reports_first_missing_key_in_declared_order():
    """With several keys missing, the first declared one is named."""
    with pytest.raises(Infeasible, match=r"missing key 'a'"):
        require_dict({"c": 1}, "x", ("a", "b", "c"))


# ------------------------------------------------------------------ require_number


@pytest.mark.parametrize("value", [0, -4, 2.5, 1e300, -0.0, MAX_ABS_INT])
def test_require_number_accepts_finite(value):
    """Finite ints and floats are returned unchanged."""
    assert require_number(value, "x") == value


@pytest.mark.parametrize(
    "value, message",
    [
        (math.nan, r"^obj: nan is not a finite number$"),
        (math.inf, r"^obj: inf is not a finite number$"),
        (-math.inf, r"^obj: -inf is not a finite number$"),
        (True, r"^obj: expected a number, got bool True$"),
        ("1.5", r"^obj: expected a number, got string '1\.5'$"),
        (None, r"^obj: expected a number, got null None$"),
        (10**16, r"^obj: number 10000000000000000 is out of range$"),
    ],
    ids=["nan", "inf", "-inf", "bool", "string", "null", "huge-int"],
)
def test_require_number_rejects(value, message):
    """NaN, infinities, bools, non-numbers and huge ints are rejected."""
    with pytest.raises(Infeasible, match=message):
        require_number(value, "obj")


# ------------------------------------------------------------------ short / type_name


def test_short_of_enormous_integer():
    """short() of a 10**5000 integer does not raise (no int-to-str limit hit) and stays short."""
    text = short(10**5000)
    assert len(text) <= 60
    assert "over 4000 digits" in text


def test_short_of_large_integer_counts_digits():
    """short() of a 10**100 integer says how many digits it has."""
    assert short(10**100) == "<integer with 101 digits>"
    assert short(-(10**100)) == "<integer with 101 digits>"


def test_short_truncates_long_repr():
    """A long repr is cut to the limit and ends with an ellipsis; short ones are untouched."""
    text = short("x" * 1000)
    assert len(text) == 40 and text.endswith("...")
    assert short([1, 2]) == "[1, 2]"
    assert len(short(list(range(1000)), limit=10)) == 10


@pytest.mark.parametrize(
    "value, name",
    [
        (None, "null"),
        (True, "bool"),
        (1, "integer"),
        (1.0, "float"),
        ("s", "string"),
        ([], "list"),
        ({}, "object"),
        ((), "tuple"),
    ],
)
def test_type_name(value, name):
    """type_name uses JSON vocabulary (bool before integer, null for None)."""
    assert type_name(value) == name
