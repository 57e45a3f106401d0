"""Spec attacks: answer files that carry the right answer in a hostile or hedged form; each must score 0.0."""

from __future__ import annotations

from orharbor.check.attacks.base import attack, leave_behind
from orharbor.check.policies import Policy
from orharbor.verifiers.contract import SpecTask


def spec_attacks(task: SpecTask) -> list[Policy]:
    """Hedged, mistyped, linked, piped, huge and snooped answers, built from the expected ones."""
    fail = task.kind.fail_reward
    outputs = task.outputs
    files = {n: (e["text"] if "text" in e else repr(e["value"])) for n, e in outputs.items()}
    name = next(n for n in outputs)
    numeric = next((n for n, e in outputs.items() if "value" in e), None)
    variants = {"not-utf8": "\udcff\udcfe" + files[name]}
    if numeric:
        value = outputs[numeric]["value"]
        variants.update(
            {
                "hedged-numbers": f"{value * 0.99!r} {value!r} {value * 1.01!r}",
                "number-in-words": f"the optimum is {value!r}",
                "nan": "nan",
                "infinity": "inf",
            }
        )
        name = numeric
    attacks = [
        attack(
            label,
            fail,
            "the answer in a form a lax grader might accept",
            files={**_encode(files), name: content.encode("utf-8", "surrogateescape")},
        )
        for label, content in variants.items()
    ]
    right_bytes = files[name].encode()
    return attacks + [
        attack(
            "symlink-tests",
            fail,
            "answer files linked to the grader's expected values",
            symlinks={n: "/tests/task.json" for n in files},
        ),
        attack(
            "fifo",
            fail,
            "a named pipe in place of the answer",
            files=_encode(files),
            agent_script=f"rm -f /app/{name}; mkfifo /app/{name}",
        ),
        attack(
            "directory",
            fail,
            "a directory in place of the answer",
            agent_script=f"rm -f /app/{name}; mkdir -p /app/{name}/x",
        ),
        attack(
            "huge-file",
            fail,
            "a 300 MB file that starts with the right answer",
            files={n: c for n, c in _encode(files).items() if n != name},
            sparse_files={name: (right_bytes + b"\n", 300 * 1024 * 1024)},
        ),
        attack(
            "snoop-expected",
            fail,
            "a process left behind that copies the expected values once /tests arrives",
            agent_script=leave_behind("snoop"),
        ),
    ]


def _encode(files: dict[str, str]) -> dict[str, bytes]:
    return {n: (c + "\n").encode() for n, c in files.items()}
