"""The exported agent images hold what Harbor's agents install at setup, read from Harbor's own code.

An installed agent's setup apt-gets every dependency it finds missing (and
those marked ``always_install`` every time); terminus-2 apt-gets tmux and
asciinema. Offline that fails the trial. These tests read the installed
Harbor's source (tests/harbor_agents.py: its ``ensure_system_dependencies``
calls, its ``SYSTEM_PACKAGES`` table, terminus-2's tool list), so a Harbor that
needs a new package fails here until the images install it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harbor_agents import harbor_requirements

from orharbor.exporter import ExportOptions, export_row
from orharbor.image_facts.agent_requirements import AGENT_REQUIREMENTS
from orharbor.exporter.modelling import export_spec
from orharbor.harbor_env.image import read_dockerfile


@pytest.fixture(scope="module")
def dockerfiles(tmp_path_factory, shipped_rows, shipped_specs) -> dict[str, Path]:
    """The agent Dockerfile of an exported task of each kind and level."""
    out = tmp_path_factory.mktemp("agent-images")
    files = {}
    for level in (1, 2):
        row = next(r for r in shipped_rows if r["level"] == level)
        files[f"algorithm-l{level}"] = export_row(row, out / f"l{level}") / "environment" / "Dockerfile"
    files["modelling"] = export_spec(shipped_specs[0], out / "spec", ExportOptions()) / "environment" / "Dockerfile"
    return files


@pytest.mark.parametrize("kind", ["algorithm-l1", "algorithm-l2", "modelling"])
@pytest.mark.slow
def test_agent_images_install_what_harbors_agents_install_at_setup(dockerfiles, kind):
    """Every package an agent's setup would apt-get is installed at build time by the exported image."""
    installed = set(read_dockerfile(dockerfiles[kind]).apt_packages)
    missing = {
        name: sorted(packages - installed) for name, packages in harbor_requirements().items() if packages - installed
    }
    assert not missing, f"{kind} image lacks what Harbor's agents apt-get at setup: {missing}"


def test_requirement_table_says_what_harbor_says():
    """image_facts/agent_requirements.py is Harbor's answer, agent by agent (its documentation stays true)."""
    assert {name: set(packages) for name, packages in AGENT_REQUIREMENTS.items()} == harbor_requirements()
