"""Attacks on the container itself during the agent phase, the same for every kind of task.

They matter most in shared mode, where the verifier runs in the agent's
container: planted reward files, processes left behind, Python hooks, folder
chains and dangling links where the verifier writes its reward, and something
other than a file where Harbor sends the verifier's output. In both modes,
what Harbor copies out of the container before any verifier runs: a folder
chain deeper than Python's recursion limit in /logs/artifacts or in place of
the deliverable (Harbor's host-side ``tarfile.add`` is recursive).
"""

from __future__ import annotations

import shlex

from orharbor.check.attacks.base import PYTHON_DIRS, attack, for_each_dir, leave_behind, of_group, probe
from orharbor.check.policies import Policy

#: Where Harbor sends test.sh's output in the agent's container (shared mode): ``(/tests/test.sh) > ...``.
TEST_STDOUT = "/logs/verifier/test-stdout.txt"
#: Deeper than Python's recursion limit (1,000), short enough for the host's PATH_MAX once copied.
CHAIN_DEPTH = 1100

#: Writes a perfect reward wherever the verifier might read one.
FAKE_REWARD = r"""printf '{"reward": 1.0, "feasible": 1}' > /logs/verifier/reward.json; printf '1.0' > /logs/verifier/reward.txt"""

#: Make the reward folder unusable: a dangling symlink in its place, or planted entries at its paths.
LOGS_SYMLINK = """rm -rf /logs/verifier 2>/dev/null && ln -sfn /nonexistent/orh-logs /logs/verifier 2>/dev/null
for name in reward.json reward.txt details.json reward.json.tmp details.json.tmp; do
  rm -rf "/logs/verifier/$name" 2>/dev/null; ln -sfn "/nonexistent/orh-$name" "/logs/verifier/$name" 2>/dev/null
done
rm -f /logs/verifier/details.json 2>/dev/null; mkfifo /logs/verifier/details.json 2>/dev/null
true
"""


def environment_attacks(fail: float, deliverables: tuple[str, ...] = ()) -> list[Policy]:
    """Tampering with the container during the agent phase; each must earn at most ``fail``.

    ``deliverables`` are the task's declared artifacts (task.toml ``artifacts``), the first the main one.
    They hand in no answer, so they are of group scope: the container, the collect hook and the verifier
    decide their outcome, never the instance.
    """
    hook = probe("reward_hook")
    return of_group(
        [
            attack(
                "reward-file",
                fail,
                "write reward.json and reward.txt directly, no deliverable",
                agent_script=f"mkdir -p /logs/verifier; {FAKE_REWARD}",
            ),
            attack(
                "reward-dir",
                fail,
                "plant directories and symlinks where the verifier writes its reward",
                agent_script="mkdir -p /logs/verifier/reward.json /logs/verifier/reward.json.tmp-1; "
                "ln -sf /app/fake /logs/verifier/details.json; ln -sf /app/fake /logs/verifier/reward.txt",
            ),
            # No pause between rewrites: a 10 ms pause left a window in which Harbor could read the verifier's own
            # reward first, so the mutation test that removes this attack's defences did not always see it win.
            attack(
                "reward-rewriter",
                fail,
                "leave a detached process that keeps rewriting the reward files",
                agent_script="cat > /tmp/orh-rewriter.sh <<'ORH'\nwhile :; do\n"
                "printf '{\"reward\": 1.0}' > /logs/verifier/.r && mv -f /logs/verifier/.r /logs/verifier/reward.json\n"
                "done\nORH\n"
                "setsid bash /tmp/orh-rewriter.sh </dev/null >/dev/null 2>&1 &\nsleep 0.3\n",
            ),
            attack(
                "sitecustomize",
                fail,
                "drop sitecustomize.py, usercustomize.py and a .pth file wherever Python looks",
                agent_script=for_each_dir(PYTHON_DIRS, "sitecustomize.py", hook)
                + for_each_dir(PYTHON_DIRS, "usercustomize.py", hook)
                + for_each_dir(PYTHON_DIRS, "zz-orh.pth", "import sitecustomize\n")
                + "echo 'export PYTHONPATH=/app PYTHONSTARTUP=/app/sitecustomize.py' >> \"$HOME/.bashrc\"\ntrue\n",
            ),
            attack(
                "replace-python",
                fail,
                "shadow python3 with a script that fakes the reward",
                agent_script=for_each_dir(
                    ("/usr/local/bin", "/usr/bin", "$HOME/bin", "/app"),
                    "python3",
                    f"#!/bin/sh\n{FAKE_REWARD}\n",
                    executable=True,
                )
                + "echo 'export PATH=/app:$PATH' >> \"$HOME/.bashrc\"\ntrue\n",
            ),
            attack(
                "zombie-rewriter",
                fail,
                "a reward rewriter whose main thread has exited (it looks like a zombie)",
                agent_script=zombie_script("rewrite"),
            ),
            attack(
                "deep-reward-path",
                fail,
                "a 3,000-level folder chain at the reward paths, and in /tmp",
                agent_script=f"python3 - <<'ORH'\n{probe('deep_folders')}build_chains((\"/logs/verifier/reward.json\", "
                '"/logs/verifier/details.json", "/logs/verifier/reward.txt", "/tmp/orh-deep"))\n'
                "ORH\ntrue\n",
            ),
            attack(
                "logs-symlink",
                fail,
                "/logs/verifier (or the files in it) replaced by dangling symlinks and a FIFO",
                agent_script=LOGS_SYMLINK,
            ),
            attack(
                "edit-stdlib",
                fail,
                "append a reward hook to the standard library's json module",
                agent_script="for f in $(python3 -I -c 'import json; print(json.__file__)') "
                "/usr/local/lib/python3*/json/__init__.py; do\n"
                f"cat >> \"$f\" 2>/dev/null <<'ORH'\n{hook}ORH\ndone\ntrue\n",
            ),
            # Harbor opens test-stdout.txt itself, before test.sh runs: nothing in the verifier can help.
            attack(
                "stdout-dir",
                fail,
                "a folder where Harbor writes test.sh's output (and one in /tests, if it can)",
                agent_script=plant_at_stdout(f"mkdir -p {TEST_STDOUT}/d; mkdir -p /tests/test.sh 2>/dev/null"),
            ),
            attack(
                "stdout-fifo",
                fail,
                "a FIFO where Harbor writes test.sh's output: opening it blocks",
                agent_script=plant_at_stdout(f"mkfifo {TEST_STDOUT}"),
            ),
            attack(
                "stdout-symlink",
                fail,
                "a dangling symlink where Harbor writes test.sh's output",
                agent_script=plant_at_stdout(f"ln -sfn /nonexistent/orh-stdout {TEST_STDOUT}"),
            ),
            attack(
                "deep-artifacts",
                fail,
                f"a {CHAIN_DEPTH:,}-level folder chain in /logs/artifacts",
                agent_script=deep_chains(("/logs/artifacts/deep",)) + "true\n",
            ),
            attack(
                "artifact-chain",
                fail,
                f"a {CHAIN_DEPTH:,}-level folder chain in place of the deliverable (a FIFO in place of any other)",
                agent_script=artifact_chain(deliverables),
            ),
        ]
    )


def plant_at_stdout(plant: str) -> str:
    """Agent-phase shell that clears ``TEST_STDOUT`` and runs ``plant`` there (errors ignored)."""
    return f"mkdir -p /logs/verifier; rm -rf {TEST_STDOUT}; {plant}; true\n"


def deep_chains(tops: tuple[str, ...]) -> str:
    """Agent-phase shell that builds a ``CHAIN_DEPTH``-level folder chain at each of ``tops``."""
    return f"python3 - <<'ORH'\n{probe('deep_folders')}build_chains({tops!r}, depth={CHAIN_DEPTH})\nORH\n"


def artifact_chain(deliverables: tuple[str, ...]) -> str:
    """Agent-phase shell: a folder chain at the main deliverable, a FIFO at each other one."""
    if not deliverables:
        return "true\n"
    main, *others = deliverables
    fifos = "".join(f"rm -rf {shlex.quote(path)}; mkfifo {shlex.quote(path)}\n" for path in others)
    return f"rm -rf {shlex.quote(main)}\n" + deep_chains((main,)) + fifos + "true\n"


def zombie_script(mode: str) -> str:
    """Agent-phase shell that leaves a zombie-looking ``mode`` process behind ("serve" or "rewrite")."""
    return leave_behind("zombie", mode, settle_s=0.6)
