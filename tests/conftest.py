"""Shared fixtures: the real benchmark files beside the checkout, exported shipped tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from orharbor.datasets.rows import read_rows, shipped_datasets
from orharbor.exporter import ExportOptions, export_dataset

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def instances_dir() -> Path:
    """The published benchmark instances of ../shared/data/instances."""
    path = SHARED_DATA / "instances"
    assert path.is_dir(), f"fixtures missing: {path} (CI checks out ../shared beside the repo)"
    return path


@pytest.fixture(scope="session")
def shipped_rows() -> list[dict]:
    """Every row of the datasets shipped in the package."""
    return [row for path in shipped_datasets() for row in read_rows(path)]


@pytest.fixture(scope="session")
def exported(tmp_path_factory, shipped_rows) -> dict[str, Path]:
    """The shipped dataset exported once per verifier mode: mode -> tasks folder."""
    out = {}
    for mode in ("separate", "shared"):
        folder = tmp_path_factory.mktemp(f"tasks-{mode}")
        export_dataset(shipped_rows, folder, ExportOptions(verifier_mode=mode))
        out[mode] = folder
    return out
