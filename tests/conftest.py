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


@pytest.fixture(scope="session")
def shipped_specs():
    """The modelling specs shipped in the package."""
    from orharbor.modelling.spec import load_specs, shipped_specs_dir

    return load_specs(shipped_specs_dir())


@pytest.fixture(scope="session")
def retail_rows() -> list[dict]:
    """The 38 RetailOpt-190 v0 scenarios of ../shared/data, imported as rows."""
    from orharbor.modelling.retailopt import import_file

    path = SHARED_DATA / "retailopt190" / "v0.jsonl"
    assert path.is_file(), f"fixture missing: {path} (CI checks out ../shared beside the repo)"
    return import_file(path)


#: Quick RetailOpt scenarios (the retail model solves each in well under a second) for exported-task tests.
QUICK_RETAIL = ("retail_f1_base_v0", "retail_f7_multiechelon_chain_v0")


@pytest.fixture(scope="session")
def exported_specs(tmp_path_factory, shipped_specs) -> dict[str, Path]:
    """Every shipped spec exported (with hints) once per verifier mode: mode -> tasks folder."""
    from orharbor.exporter.modelling import export_spec

    out = {}
    for mode in ("separate", "shared"):
        folder = tmp_path_factory.mktemp(f"specs-{mode}")
        for spec in shipped_specs:
            export_spec(spec, folder, ExportOptions(verifier_mode=mode), hints="all")
        out[mode] = folder
    return out


@pytest.fixture(scope="session")
def exported_retail(tmp_path_factory, retail_rows) -> dict[str, Path]:
    """The quick RetailOpt rows exported with both prompts, once per verifier mode."""
    from orharbor.exporter.modelling import export_retail

    out = {}
    for mode in ("separate", "shared"):
        folder = tmp_path_factory.mktemp(f"retail-{mode}")
        options = ExportOptions(verifier_mode=mode)
        for row in retail_rows:
            if row["scenario_id"] in QUICK_RETAIL:
                export_retail(row, folder, options, prompt="full")
                export_retail(dict(row, id=row["id"] + "-schema"), folder, options, prompt="schema")
        out[mode] = folder
    return out
