"""Plain-text tables for terminal output, shared by ``check`` and ``report`` (a bottom-floor helper)."""

from __future__ import annotations


def columns(rows: list[list[str]]) -> str:
    """Left-aligned columns two spaces apart; the first row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)
