"""Reading benchmark text files: shared by every problem class's formats.py.

``load`` accepts a path or the text itself; ``Lines`` walks a file line by
line and builds ``file:line: expectation`` errors, so every reader reports a
broken file the same way.
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


def unify_newlines(text: str) -> tuple[str, str]:
    """``(text with "\\n" line ends, the file's own line end)``, so writers can restore it."""
    newline = "\r\n" if "\r\n" in text else "\n"
    return (text.replace("\r\n", "\n") if newline == "\r\n" else text), newline
