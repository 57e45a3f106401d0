"""The exported agent images hold what Harbor's agents install at setup, read from Harbor's own code.

An installed agent's setup apt-gets every dependency it finds missing (and
those marked ``always_install`` every time); terminus-2 apt-gets tmux and
asciinema. Offline that fails the trial. These tests read the installed
Harbor's source (its ``ensure_system_dependencies`` calls, its
``SYSTEM_PACKAGES`` table, terminus-2's tool list), so a Harbor that needs a
new package fails here until the images install it.
"""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # Harbor imports LiteLLM, which would fetch its price map

import harbor  # noqa: E402
import pytest  # noqa: E402
from harbor.agents.factory import AgentFactory
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.models.agent.name import AgentName

from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.agent_requirements import AGENT_REQUIREMENTS
from orharbor.exporter.modelling import export_spec
from orharbor.harbor_env.image import read_dockerfile

INSTALLED_AGENTS = ("claude-code", "codex", "gemini-cli", "aider", "openhands", "goose", "mini-swe-agent")
HARBOR = Path(harbor.__file__).parent


def _dependency_names(cls: type) -> set[str]:
    """The names every ``ensure_system_dependencies(env, (...))`` call in ``cls`` and its Harbor bases passes."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is BaseInstalledAgent or not klass.__module__.startswith("harbor."):
            continue
        tree = ast.parse(inspect.getsource(klass))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "ensure_system_dependencies"):
                argument = node.args[1] if len(node.args) > 1 else node.keywords[-1].value
                names |= set(ast.literal_eval(argument))  # a computed argument fails here: read it by hand
    return names


def harbor_installed_agent_packages(name: str) -> set[str]:
    """The Debian packages Harbor's setup of agent ``name`` checks for or installs (apt-get's names)."""
    cls = AgentFactory.get_agent_class(AgentName(name))
    names = _dependency_names(cls)
    assert names, f"{name}: no ensure_system_dependencies call found in {inspect.getsourcefile(cls)}"
    return {package for dependency in names for package in cls.SYSTEM_PACKAGES[dependency].packages["apt-get"]}


def harbor_terminus_packages() -> set[str]:
    """The tools terminus-2 puts on its apt-get line (``tools_needed.append(...)`` in its tmux session)."""
    tree = ast.parse((HARBOR / "agents" / "terminus_2" / "tmux_session.py").read_text())
    tools = {node.args[0].value for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "tools_needed"
             and isinstance(node.args[0], ast.Constant)}
    assert "tmux" in tools, "terminus-2's tool list not found where it was"
    return tools


def harbor_requirements() -> dict[str, set[str]]:
    """Agent name -> Debian packages, all read from Harbor's code."""
    return {"terminus-2": harbor_terminus_packages(),
            **{name: harbor_installed_agent_packages(name) for name in INSTALLED_AGENTS}}


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
def test_agent_images_install_what_harbors_agents_install_at_setup(dockerfiles, kind):
    """Every package an agent's setup would apt-get is installed at build time by the exported image."""
    installed = set(read_dockerfile(dockerfiles[kind]).apt_packages)
    missing = {name: sorted(packages - installed) for name, packages in harbor_requirements().items()
               if packages - installed}
    assert not missing, f"{kind} image lacks what Harbor's agents apt-get at setup: {missing}"


def test_requirement_table_says_what_harbor_says():
    """exporter/agent_requirements.py is Harbor's answer, agent by agent (its documentation stays true)."""
    assert {name: set(packages) for name, packages in AGENT_REQUIREMENTS.items()} == harbor_requirements()

