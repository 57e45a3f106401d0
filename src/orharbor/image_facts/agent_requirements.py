"""The Debian packages Harbor's agents need in a task image, so that their setup installs nothing.

An installed agent's ``install()`` calls ``ensure_system_dependencies`` (Harbor's
``agents/installed/base.py``): for each dependency whose commands are missing,
or that is marked ``always_install``, it runs ``apt-get update && apt-get
install``. terminus-2 does the same for tmux, and for asciinema when it records
the session (its default). In an agent phase with no network, or with an
allowlist that leaves out Debian's mirrors, that apt-get fails and so does the
trial's setup. The exported images therefore install these packages at build
time. ``tests/test_agent_requirements.py`` reads Harbor's code and fails when a
new Harbor needs more than this table holds.

What the agents still download at setup, which no image package removes
(out of scope here; their own hosts must be reachable): claude-code (its
bootstrap script from Anthropic's download host), codex (nvm from GitHub, then
Node 22 from nodejs.org and ``@openai/codex`` from npm), gemini-cli (nvm and Node,
then ``@google/gemini-cli`` from npm), aider (its install script from aider.chat,
which fetches uv and aider from PyPI), openhands (uv from astral.sh, a Python
build and ``openhands-ai`` from PyPI), goose (its CLI from GitHub releases),
mini-swe-agent (uv from astral.sh, a Python build, and the agent from PyPI).
terminus-2 downloads nothing: it runs in Harbor's own process.
"""

from __future__ import annotations

#: agent name -> Debian packages its setup checks for or installs; each line says where in Harbor
#: (harbor/agents/...) it comes from. build_tools is Harbor's name for build-essential (gcc, make);
#: libxcb and libgomp are installed on every goose setup (always_install), so they must already be there
#: for apt-get to have nothing to fetch.
AGENT_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "terminus-2": (
        "tmux",
        "asciinema",
    ),  # terminus_2/tmux_session.py _install_recording_tools: tmux -V, asciinema --version
    "claude-code": ("curl", "bash", "nodejs", "npm", "procps"),  # installed/claude_code.py install()
    "codex": ("curl", "bash", "nodejs", "npm", "ripgrep"),  # installed/codex.py install()
    "gemini-cli": ("curl",),  # installed/gemini_cli.py install()
    "aider": ("curl", "git", "coreutils"),  # installed/aider.py install()
    "openhands": ("curl", "git", "build-essential", "tmux"),  # installed/openhands.py install()
    "goose": ("curl", "bzip2", "libxcb1", "libgomp1"),  # installed/goose.py install()
    "mini-swe-agent": ("curl", "bash", "build-essential", "git"),  # installed/mini_swe_agent.py install()
}

#: Beyond the agents' own checks: CA certificates for their HTTPS downloads, xz for Node's tarballs (nvm).
EXTRA_PACKAGES = ("ca-certificates", "xz-utils")


def agent_apt_packages() -> tuple[str, ...]:
    """Every package of :data:`AGENT_REQUIREMENTS` and :data:`EXTRA_PACKAGES`, sorted, each once."""
    return tuple(sorted({p for packages in AGENT_REQUIREMENTS.values() for p in packages} | set(EXTRA_PACKAGES)))
