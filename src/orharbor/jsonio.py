"""Canonical JSON: one byte string per value, so hashes pin determinism."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical(value: Any) -> str:
    """Compact, key-sorted, ASCII JSON: identical bytes on every platform."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical(value).encode("ascii")).hexdigest()
