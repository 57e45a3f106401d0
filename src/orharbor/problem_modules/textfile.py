"""Reading and writing benchmark text files: the steps every problem class's formats.py shares.

``load`` accepts a path or the text itself; ``Lines`` walks a file line by
line and builds ``file:line: expectation`` errors, so every reader reports a
broken file the same way. ``reader`` makes the whole ``read`` of a
single-instance format from its ``parse``; ``check_format`` checks a ``fmt``
argument. Writers build the canonical lines and ``render`` them with a published
file's ``layout`` (line overrides, what follows the last line, the line ending);
a reader records that layout (``changed_lines``, ``finish_layout``) and keeps it
only if writing with it gives the file back.
"""

from __future__ import annotations

import os
from pathlib import Path


def load(path_or_text, problem: str) -> tuple[str, str, str | None]:
    """``(text, name for messages, file stem or None)`` of a path or of the text itself."""
    if isinstance(path_or_text, Path) or (
        isinstance(path_or_text, str) and "\n" not in path_or_text and path_or_text and os.path.isfile(path_or_text)
    ):
        path = Path(path_or_text)
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read(), path.name, path.stem
    if isinstance(path_or_text, str) and "\n" not in path_or_text and (os.sep in path_or_text or "/" in path_or_text):
        raise FileNotFoundError(f"no such {problem} file: {path_or_text}")
    if not isinstance(path_or_text, str):
        raise TypeError(f"expected a path or the file's text, got {type(path_or_text).__name__}")
    return path_or_text, "<text>", None


def check_format(fmt, formats: tuple[str, ...], problem: str, optional: bool = True) -> None:
    """ValueError unless ``fmt`` is one of ``formats`` (or None, when ``optional``)."""
    if not (optional and fmt is None) and fmt not in formats:
        raise ValueError(f"unknown {problem} format {fmt!r}; known: {', '.join(formats)}")


def reader(formats: tuple[str, ...], problem: str, parse):
    """``read`` of a single-instance format: ``fmt`` checked, ``parse(text, name, stem)``, a file kept as ``source``."""

    def read(path_or_text, fmt: str | None = None) -> dict:
        """The instance of a file (a ``Path`` or a path string) or of the file's text."""
        check_format(fmt, formats, problem)
        text, name, stem = load(path_or_text, problem)
        instance = parse(text, name, stem)
        if stem is not None:
            instance["source"] = name
        return instance

    return read


def is_int(token: str) -> bool:
    """A plain decimal integer token, optionally signed."""
    body = token[1:] if token[:1] in "+-" else token
    return body.isascii() and body.isdigit()


class Lines:
    """The lines of a file with 1-based numbering for messages."""

    def __init__(self, text: str, name: str) -> None:
        self.name = name
        self.text = text
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()  # the final newline ends the last line
        self.pos = 0

    def error(self, lineno: int, message: str) -> ValueError:
        return ValueError(f"{self.name}:{lineno}: {message}")

    def next(self, what: str) -> tuple[int, str]:
        """The next line and its number; ``what`` names it in the end-of-file error."""
        if self.pos >= len(self.lines):
            raise self.error(len(self.lines) + 1, f"expected {what}, got the end of the file")
        self.pos += 1
        return self.pos, self.lines[self.pos - 1]

    def nonblank(self, what: str) -> tuple[int, str]:
        """The next line that is not blank, and its number."""
        while True:
            lineno, line = self.next(what)
            if line.strip():
                return lineno, line

    def keyword(self, word: str, what: str, skip_blank: bool = False) -> int:
        """The next line (the next non-blank one with ``skip_blank``) must be ``word``; its number."""
        lineno, line = self.nonblank(what) if skip_blank else self.next(what)
        if line.strip() != word:
            raise self.error(lineno, f"expected {what}, got {line.strip()[:40]!r}")
        return lineno

    def ints(self, what: str, count: int | None = None, at_least: int | None = None) -> tuple[int, list[int]]:
        """The next line as integers: exactly ``count`` or at least ``at_least`` of them."""
        lineno, line = self.next(what)
        tokens = line.split()
        for tok in tokens:
            if not is_int(tok):
                raise self.error(lineno, f"expected an integer, got {tok[:40]!r}")
        if count is not None and len(tokens) != count:
            raise self.error(lineno, f"expected {count} integers, got {len(tokens)}")
        if at_least is not None and len(tokens) < at_least:
            raise self.error(lineno, f"expected at least {at_least} integers, got {len(tokens)}")
        return lineno, [int(t) for t in tokens]

    def tail(self, after: str) -> str:
        """What follows the last line read: must be blank; returned verbatim."""
        rest = self.lines[self.pos :]
        for offset, line in enumerate(rest):
            if line.strip():
                raise self.error(self.pos + offset + 1, f"unexpected content after {after}: {line.strip()[:40]!r}")
        consumed = "\n".join(self.lines[: self.pos])
        return self.text[len(consumed) :]


def split_lines(text: str, name: str) -> tuple[Lines, str]:
    """``(the Lines of text, its own line end)``: what every parser starts from."""
    body, newline = unify_newlines(text)
    return Lines(body, name), newline


def unify_newlines(text: str) -> tuple[str, str]:
    """``(text with "\\n" line ends, the file's own line end)``, so writers can restore it."""
    if not isinstance(text, str):
        raise TypeError(f"expected the file's text, got {type(text).__name__}")
    newline = "\r\n" if "\r\n" in text else "\n"
    return (text.replace("\r\n", "\n") if newline == "\r\n" else text), newline


def with_newline(text: str, newline: str) -> str:
    """``text`` (``"\\n"`` line ends) with ``newline`` line ends."""
    return text if newline == "\n" else text.replace("\n", newline)


def layout_of(instance: dict, fmt: str) -> dict:
    """The instance's ``layout`` if it was read from a file in ``fmt``, else ``{}`` (written canonically)."""
    layout = instance.get("layout") or {}
    return layout if layout.get("format") == fmt else {}


def render(lines: list[str], layout: dict) -> str:
    """The file text of canonical ``lines`` replayed with ``layout``: its ``lines``, ``tail`` and ``newline``."""
    lines = list(lines)
    for lineno, raw in layout.get("lines", []):
        lines[lineno - 1] = raw
    return with_newline("\n".join(lines) + layout.get("tail", "\n"), layout.get("newline", "\n"))


def finish_layout(instance: dict, fmt: str, layout: dict, lines: Lines, after: str, newline: str) -> None:
    """Add what follows the last line read and the line end to ``layout``; store it if it says anything."""
    tail = lines.tail(after)
    if tail != "\n":
        layout["tail"] = tail
    if newline != "\n":
        layout["newline"] = newline
    if layout:
        instance["layout"] = {"format": fmt, **layout}


def changed_lines(raw: list[str], canonical: list[str]) -> list[list]:
    """``[[line number, raw line], ...]`` where a file's lines differ from the canonical ones (same count)."""
    return [[i + 1, line] for i, (line, canon) in enumerate(zip(raw, canonical)) if line != canon]
