"""safe_json: untrusted deliverables are read as regular files and parsed as strict JSON."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from orharbor.verifiers import safe_json
from orharbor.verifiers.safe_json import BadOutput
from orharbor.verifiers.strict import Infeasible


def write(tmp_path: Path, data: bytes, name: str = "solution.json") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.fixture
def deadline():
    """Fail (instead of hanging) if the test body blocks for more than 5 s."""

    def on_alarm(signum, frame):
        raise TimeoutError("blocked for more than 5 s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------ good input


def test_bad_output_is_infeasible():
    """BadOutput is an Infeasible, so verifiers can catch one family of errors."""
    assert issubclass(BadOutput, Infeasible)


def test_valid_file_loads(tmp_path):
    """A regular file of strict JSON loads to the same value."""
    path = write(tmp_path, b'{"starts": [[0, 24], [5, -3]], "x": 1.5, "s": "\xc3\xa9", "n": null}')
    assert safe_json.load(path) == {"starts": [[0, 24], [5, -3]], "x": 1.5, "s": "\u00e9", "n": None}


def test_read_regular_file_returns_bytes(tmp_path):
    """read_regular_file returns the file's exact bytes."""
    data = bytes(range(256))
    assert safe_json.read_regular_file(write(tmp_path, data)) == data


def test_file_of_exactly_max_bytes_is_accepted(tmp_path):
    """The size limit is inclusive: a file of exactly max_bytes is read."""
    data = b"[" + b"1," * 48 + b"1 ]"  # 100 bytes
    assert len(data) == 100
    assert safe_json.load(write(tmp_path, data), max_bytes=100) == [1] * 49


def test_twenty_digit_integer_is_accepted():
    """Integers of up to MAX_INT_DIGITS digits parse (with or without a sign)."""
    big = "9" * safe_json.MAX_INT_DIGITS
    assert safe_json.parse_strict(f"[{big}, -{big}]".encode(), "x.json") == [int(big), -int(big)]


# ------------------------------------------------------------------ files that are refused


def test_missing_file(tmp_path):
    """A missing deliverable is reported as not existing."""
    path = str(tmp_path / "solution.json")
    with pytest.raises(BadOutput, match=r"solution\.json does not exist"):
        safe_json.load(path)


def test_symlink_to_regular_file_is_refused(tmp_path):
    """A symlink is refused even when it points at a readable regular file."""
    target = write(tmp_path, b"[1]", "real.json")
    link = tmp_path / "solution.json"
    link.symlink_to(target)
    with pytest.raises(BadOutput, match=r"solution\.json cannot be opened as a regular file"):
        safe_json.load(str(link))


def test_symlink_to_dev_zero_is_refused(tmp_path, deadline):
    """A symlink to /dev/zero is refused at open, before anything is read."""
    link = tmp_path / "solution.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(BadOutput, match=r"cannot be opened as a regular file"):
        safe_json.read_regular_file(str(link))


def test_fifo_is_refused_without_blocking(tmp_path, deadline):
    """A FIFO with no writer is refused at once instead of blocking the verifier."""
    path = tmp_path / "solution.json"
    os.mkfifo(path)
    with pytest.raises(BadOutput, match=r"solution\.json is not a regular file"):
        safe_json.load(str(path))


def test_directory_is_refused(tmp_path):
    """A directory named like the deliverable is not a regular file."""
    path = tmp_path / "solution.json"
    path.mkdir()
    with pytest.raises(BadOutput, match=r"solution\.json is not a regular file"):
        safe_json.load(str(path))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, r"^solution\.json does not exist$"),
        (lambda p: p.mkdir(), r"^solution\.json is not a regular file$"),
        (lambda p: p.symlink_to("/dev/zero"), r"^solution\.json cannot be opened as a regular file"),
        (lambda p: p.write_bytes(b"x" * 11), r"^solution\.json is 11 bytes, over the limit of 10$"),
    ],
    ids=["missing", "directory", "symlink", "too-big"],
)
def test_read_regular_file_name_replaces_path(tmp_path, make, message):
    """With ``name`` given, messages call the file by that name instead of its (temporary) path."""
    path = tmp_path / "deep" / "temp" / "out.json"
    path.parent.mkdir(parents=True)
    make(path)
    with pytest.raises(BadOutput, match=message):
        safe_json.read_regular_file(str(path), 10, name="solution.json")


def test_file_over_max_bytes_is_refused(tmp_path):
    """A file one byte over max_bytes is refused with its size and the limit."""
    path = write(tmp_path, b"[" + b" " * 99 + b"]")  # 101 bytes
    with pytest.raises(BadOutput, match=r"is 101 bytes, over the limit of 100"):
        safe_json.load(path, max_bytes=100)


# ------------------------------------------------------------------ contents that are refused

BROKEN = [
    ("invalid-utf8", b'{"a": "\xff"}', r"^solution\.json is not valid UTF-8 \(byte 7\)$"),
    ("not-json", b"starts: [[0]]", r"^solution\.json is not valid JSON: Expecting value"),
    ("truncated", b'{"starts": [[0, 1]', r"^solution\.json is not valid JSON"),
    ("trailing-garbage", b"[1] [2]", r"^solution\.json is not valid JSON: Extra data"),
    ("empty", b"", r"^solution\.json is not valid JSON"),
    ("duplicate-key", b'{"starts": [], "starts": [[0]]}', r"^solution\.json: duplicate key 'starts' in JSON object$"),
    ("nested-duplicate-key", b'[{"a": 1, "b": 2, "a": 3}]', r"^solution\.json: duplicate key 'a'"),
    ("nan", b"[NaN]", r"^solution\.json: NaN is not allowed in JSON$"),
    ("infinity", b'{"x": Infinity}', r"^solution\.json: Infinity is not allowed"),
    ("minus-infinity", b"[-Infinity]", r"^solution\.json: -Infinity is not allowed"),
    ("overflow", b"[1e400]", r"^solution\.json: number 1e400 overflows to infinity$"),
    ("negative-overflow", b"[-1e400]", r"^solution\.json: number -1e400 overflows to infinity$"),
    ("long-integer", b"[" + b"1" * 25 + b"]", r"^solution\.json: integer with 25 digits is out of range$"),
    ("deep-unclosed", b"[" * 100_000, r"^solution\.json is nested too deeply$"),
    ("deep-closed", b"[" * 100_000 + b"]" * 100_000, r"^solution\.json is nested too deeply$"),
    ("deep-objects", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, r"^solution\.json is nested too deeply$"),
]


@pytest.mark.parametrize("data, message", [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN])
def test_broken_json_file_is_refused(tmp_path, data, message):
    """Each defect of a deliverable's content raises BadOutput saying what is wrong."""
    path = write(tmp_path, data)
    with pytest.raises(BadOutput, match=message):
        safe_json.load(path)


@pytest.mark.parametrize("data, message", [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN])
def test_parse_strict_refuses_the_same_bytes(data, message):
    """parse_strict alone refuses the same contents, naming the place it was given."""
    with pytest.raises(BadOutput, match=message):
        safe_json.parse_strict(data, "solution.json")


def test_parse_strict_names_the_given_place():
    """The place passed to parse_strict appears in structural error messages."""
    with pytest.raises(BadOutput, match=r"^out/answer\.json is not valid JSON"):
        safe_json.parse_strict(b"{", "out/answer.json")


def test_negative_long_integer_counts_digits_not_sign():
    """A 25-digit negative integer is reported as having 25 digits."""
    with pytest.raises(BadOutput, match=r"integer with 25 digits is out of range"):
        safe_json.parse_strict(b"[-" + b"1" * 25 + b"]", "solution.json")
