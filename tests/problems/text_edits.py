"""Edits of one line of a benchmark file's text, for the broken-file cases of tests/problems."""

from __future__ import annotations


def edit_line(text: str, lineno: int, new: str | None) -> str:
    """``text`` with line ``lineno`` (from 1) replaced by ``new``, or deleted when ``new`` is None."""
    lines = text.split("\n")
    if new is None:
        del lines[lineno - 1]
    else:
        lines[lineno - 1] = new
    return "\n".join(lines)


def line_edit(lineno: int, new: str | None):
    """The edit :func:`edit_line` makes, as a function of the text (for BROKEN tables built before the text)."""
    return lambda text: edit_line(text, lineno, new)
