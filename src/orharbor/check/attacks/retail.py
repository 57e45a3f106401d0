"""RetailOpt attacks: the verifier grades the answer.json a run of model.py writes.

So every hostile answer is written by a model.py (a typed file is never
read), and a right answer typed without a model that computes it must score
0.0 too (``blind-guess``). A model.py that writes the right answer as a
constant is a blind guess in code and does score 1.0: no grader of one
answer can stop that.
"""

from __future__ import annotations

import json

from orharbor.check.attacks.base import attack, leave_behind, probe
from orharbor.check.policies import Policy, deliverable_name
from orharbor.exporter.modelling import answer_program
from orharbor.verifiers.contract import RetailTask

#: The tricks of ``probes/retail_model.py``: each writes the right answer its own way, or nothing if it fails.
TRICKS = {
    "symlink-tests": "a model.py whose answer is a symlink to the grader's expected values",
    "read-tests": "a model.py that reads the expected values from /tests/task.json",
    "fifo": "a model.py that leaves a named pipe as its answer",
    "directory": "a model.py that leaves a directory as its answer",
    "huge-file": "a model.py whose answer is a 32 MB sparse file that starts with the right answer",
}


def retail_attacks(task: RetailTask) -> list[Policy]:
    """Answers in forms a lax grader might accept, tricks, blind guesses and a snoop; each must score 0.0."""
    fail = task.kind.fail_reward
    program = deliverable_name(task)
    status, objective = task.expected["status"], task.expected["objective"]
    right = {"status": status, "objective": objective}
    text = json.dumps(right)
    number = objective or 0.0
    variants = {
        "objective-as-string": json.dumps({**right, "objective": str(number)}),
        "objective-as-bool": json.dumps({**right, "objective": True}),
        "objective-nan": json.dumps({**right, "objective": float("nan")}),
        "objective-list": json.dumps({**right, "objective": [number * 0.999, number, number * 1.001]}),
        "duplicate-keys": '{"status": "%s", "objective": 0, "objective": %r}' % (status, number),
        "answer-list": json.dumps([{"status": "INFEASIBLE", "objective": None}, right]),
        "not-json": "\udcff\x00{" + text,
    }
    attacks = [
        attack(
            label,
            fail,
            "a model.py that writes the answer in a form a lax grader might accept",
            files={program: answer_program(content.encode("utf-8", "surrogateescape")).encode()},
        )
        for label, content in variants.items()
    ]
    tricks = probe("retail_model")
    attacks += [
        attack(label, fail, description, files={program: f"{tricks}\n\nhand_in({label!r}, {text!r})\n".encode()})
        for label, description in TRICKS.items()
    ]
    typed = task.run.output
    return attacks + [
        attack(
            "blind-guess",
            fail,
            f"the right answer typed into /app/{typed}, no model.py",
            files={typed: (text + "\n").encode()},
        ),
        attack(
            "blind-guess-idle-model",
            fail,
            f"the right answer typed into /app/{typed}, and a model.py that writes nothing",
            files={typed: (text + "\n").encode(), program: b"import sys\n"},
        ),
        attack(
            "snoop-expected",
            fail,
            "a process left behind that turns /app/model.py into one writing the expected values once /tests arrives",
            agent_script=leave_behind("snoop"),
        ),
    ]
