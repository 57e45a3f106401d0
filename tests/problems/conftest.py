"""The published benchmark files the per-class tests read, under tests/conftest.py's ``instances_dir``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def folder(instances_dir, request) -> Path:
    """The test module's folder of published files: ``instances/<FOLDER>``."""
    return instances_dir / request.module.FOLDER


@pytest.fixture(scope="module")
def published(folder):
    """``published(name)``: the exact text of one of those files, line ends kept."""

    def text(name: str) -> str:
        with open(folder / name, encoding="utf-8", newline="") as fh:
            return fh.read()

    return text
