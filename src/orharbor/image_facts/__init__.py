"""What a task image is: its base image, pinned packages, users and interpreters, set once for every reader.

The exporter writes these facts into every Dockerfile and task.toml; the
bubblewrap environment (:mod:`orharbor.harbor_env`) and its one-shot sandbox
(:mod:`orharbor.harbor_env.sandbox`, which ``check``, ``verify`` and
``validate-specs`` run in) reproduce the image from them; ``orharbor images``
checks a base image against them. So they sit on the bottom floor of the
package and import nothing of orharbor above it:

- this module: the base image, the package pins and stacks, the solver venv,
  the Debian packages the agents need, the agent's user and the solver's uid;
- :mod:`orharbor.image_facts.base_image`: what a base image must provide, and
  the check that says what one lacks;
- :mod:`orharbor.image_facts.interpreter_record`: the record of the verifier's
  interpreter every image writes right after that check;
- :mod:`orharbor.image_facts.agent_requirements`: the Debian packages each of
  Harbor's agents checks for or installs.
"""

from __future__ import annotations

from orharbor.image_facts.agent_requirements import agent_apt_packages

#: Pinned base image (python 3.12 slim on Debian bookworm, by digest).
BASE_IMAGE = "python:3.12-slim-bookworm@sha256:782412e85d0f0984994c290652577d4018aff08145c85b262bb63dc0c7522254"
#: Every package a task image installs, pinned once: the level-2 solver venv and the modelling stack.
PINS = {"ortools": "9.15.6755", "pyomo": "6.10.1", "highspy": "1.16.0", "numpy": "2.2.6", "scipy": "1.15.3"}


def pinned(*names: str) -> tuple[str, ...]:
    """``name==version`` of each package, from :data:`PINS`."""
    return tuple(f"{name}=={PINS[name]}" for name in names)


SOLVER_VENV = "/opt/orharbor-solver"
#: The packages of the level-2 solver venv (ortools joins them with --allow-ortools).
SOLVER_STACK = ("numpy", "scipy")
#: The modelling stack of the modelling images (agent, and the RetailOpt verifier).
MODELLING_STACK = ("ortools", "pyomo", "highspy", "numpy", "scipy")
SOLVER_PACKAGES = pinned(*SOLVER_STACK)
ORTOOLS_PACKAGE = pinned("ortools")[0]
MODELLING_PACKAGES = pinned(*MODELLING_STACK)
#: Debian packages Harbor's agents check for or install at setup (terminus-2, claude-code, codex, ...):
#: see :mod:`orharbor.image_facts.agent_requirements`, which says where in Harbor each comes from.
AGENT_APT_PACKAGES = agent_apt_packages()
AGENT_USER = "agent"
#: solve.py runs as this uid (Debian's ``nobody``) when scored outside a task container; inside
#: one, every run gets a fresh uid of its own (verifiers/lockdown.py).
SOLVER_UID = 65534
