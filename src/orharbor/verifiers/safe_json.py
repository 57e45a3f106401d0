"""Read an untrusted JSON file without letting it crash or stall the verifier.

Refuses symlinks, devices and FIFOs (a deliverable must be a regular file),
caps the size, rejects invalid UTF-8, duplicate keys, NaN and infinities,
over-long integers and nesting deeper than the decoder's recursion limit.
"""

from __future__ import annotations

import json
import os
import stat

from orharbor.verifiers.strict import Infeasible

#: Default cap on a deliverable's size. Solutions of the largest instances are
#: a few hundred kilobytes; anything far bigger is an attack or a bug.
MAX_BYTES = 32 * 1024 * 1024
MAX_INT_DIGITS = 20


class BadOutput(Infeasible):
    """The deliverable is missing, not a regular file, too big or not strict JSON."""


def read_regular_file(path: str, max_bytes: int = MAX_BYTES, name: str | None = None) -> bytes:
    """Bytes of ``path`` if it is a regular file (not a symlink) of at most ``max_bytes``.

    ``name`` is how messages call the file (default: its path).
    """
    shown = name or path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise BadOutput(f"{shown} does not exist") from None
    except OSError as exc:  # ELOOP for a symlink, EACCES, ...
        raise BadOutput(f"{shown} cannot be opened as a regular file ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BadOutput(f"{shown} is not a regular file")
        if info.st_size > max_bytes:
            raise BadOutput(f"{shown} is {info.st_size} bytes, over the limit of {max_bytes}")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise BadOutput(f"{shown} grew over the limit of {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_strict(data: bytes, where: str) -> object:
    """Strict JSON from bytes: UTF-8, no duplicate keys, no NaN, bounded ints and depth."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadOutput(f"{where} is not valid UTF-8 (byte {exc.start})") from None
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except BadOutput as exc:
        raise BadOutput(f"{where}: {exc}") from None
    except RecursionError:
        raise BadOutput(f"{where} is nested too deeply") from None
    except ValueError as exc:
        raise BadOutput(f"{where} is not valid JSON: {str(exc)[:200]}") from None


def load(path: str, max_bytes: int = MAX_BYTES) -> object:
    """Read and strictly parse the JSON deliverable at ``path``."""
    return parse_strict(read_regular_file(path, max_bytes), os.path.basename(path))


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise BadOutput(f"duplicate key {key[:40]!r} in JSON object")
        result[key] = value
    return result


def _no_constant(name: str) -> object:
    raise BadOutput(f"{name} is not allowed in JSON")


def _finite_float(token: str) -> float:
    value = float(token)
    if value in (float("inf"), float("-inf")):
        raise BadOutput(f"number {token[:40]} overflows to infinity")
    return value


def _bounded_int(token: str) -> int:
    digits = len(token.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise BadOutput(f"integer with {digits} digits is out of range")
    return int(token)
