"""What Harbor's agents need from a task image, read from the installed Harbor's own code.

An installed agent's setup calls ``ensure_system_dependencies(environment, (...))``
with names of Harbor's ``SYSTEM_PACKAGES`` table (the commands it checks for and
the Debian packages apt-get installs when they are missing); terminus-2 checks
``tmux -V`` and ``asciinema --version`` and apt-gets the tools it lacks.
"""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # Harbor imports LiteLLM, which would fetch its price map

import harbor  # noqa: E402
from harbor.agents.factory import AgentFactory  # noqa: E402
from harbor.agents.installed.base import BaseInstalledAgent  # noqa: E402
from harbor.models.agent.name import AgentName  # noqa: E402

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
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "ensure_system_dependencies"
            ):
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
    tools = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "append"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "tools_needed"
        and isinstance(node.args[0], ast.Constant)
    }
    assert "tmux" in tools, "terminus-2's tool list not found where it was"
    return tools


def harbor_requirements() -> dict[str, set[str]]:
    """Agent name -> Debian packages, all read from Harbor's code."""
    return {
        "terminus-2": harbor_terminus_packages(),
        **{name: harbor_installed_agent_packages(name) for name in INSTALLED_AGENTS},
    }


def harbor_commands() -> dict[str, set[str]]:
    """Agent name -> the commands its setup checks for before it would apt-get anything."""
    commands = {"terminus-2": harbor_terminus_packages()}  # its tool names are its commands and packages
    for name in INSTALLED_AGENTS:
        cls = AgentFactory.get_agent_class(AgentName(name))
        commands[name] = {
            command for dependency in _dependency_names(cls) for command in cls.SYSTEM_PACKAGES[dependency].commands
        }
    return commands
