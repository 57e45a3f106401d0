"""Level-1 attacks: malformed or sneaky solution files, most built from the reference solution itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

from orharbor.check.attacks.base import attack, of_group
from orharbor.check.policies import Policy, deliverable_name
from orharbor.verifiers.contract import Level1Task


def level1_attacks(task_dir: Path, task: Level1Task) -> list[Policy]:
    """Solution files a lax parser or grader might accept; each must earn the failure reward.

    Each is malformed in a way the strict parser refuses whatever the instance (built from
    the reference only to look as right as it can), so they are of group scope.
    """
    fail = task.kind.fail_reward
    name = deliverable_name(task)
    reference = json.loads((task_dir / "solution" / "solution.json").read_text())
    compact = json.dumps(reference)
    bools = json.dumps(_map_ints(reference, lambda v: bool(v) if v in (0, 1) else v))
    floats = json.dumps(_map_ints(reference, float))
    if bools == compact:  # no 0/1 integer to confuse (a roster of shift names): retype a value instead
        bools = _replace_first_int(compact, "true")
    if floats == compact:
        floats = _replace_first_int(compact, "1.0")
    return of_group(
        [
            attack("not-json", fail, "garbage bytes", files={name: b"\xff\xfe\x00garbage{"}),
            attack("wrong-shape", fail, "a JSON value of the wrong shape", files={name: b'{"starts": {"0": [1, 2]}}'}),
            attack(
                "bool-for-int",
                fail,
                "the reference with 0/1 written as false/true (or a value retyped as true)",
                files={name: bools.encode()},
            ),
            attack(
                "floats",
                fail,
                "the reference with every integer written as a float (or a value as 1.0)",
                files={name: floats.encode()},
            ),
            attack(
                "nan",
                fail,
                "the reference with one number replaced by NaN",
                files={name: _replace_first_int(compact, "NaN").encode()},
            ),
            attack(
                "infinity",
                fail,
                "the reference with one number replaced by Infinity",
                files={name: _replace_first_int(compact, "Infinity").encode()},
            ),
            attack(
                "overflow-float",
                fail,
                "the reference with one number replaced by 1e999",
                files={name: _replace_first_int(compact, "1e999").encode()},
            ),
            attack(
                "huge-integer",
                fail,
                "the reference with one number replaced by a 400-digit integer",
                files={name: _replace_first_int(compact, "1" + "0" * 400).encode()},
            ),
            attack(
                "huge-file",
                fail,
                "a 300 MB file that starts with the reference",
                sparse_files={name: (compact.encode(), 300 * 1024 * 1024)},
            ),
            attack(
                "deep-nesting", fail, "JSON nested 100,000 levels deep", files={name: b"[" * 100_000 + b"]" * 100_000}
            ),
            attack(
                "duplicate-keys",
                fail,
                "a bad value, then the reference under the same key",
                files={name: ('{"' + next(iter(reference)) + '": 0, ' + compact[1:]).encode()}
                if isinstance(reference, dict) and reference
                else {name: b"{}"},
            ),
            attack(
                "extra-keys",
                fail,
                "the reference plus keys claiming a reward",
                files={name: json.dumps({**reference, "reward": 1.0, "objective": 0}).encode()}
                if isinstance(reference, dict)
                else {name: b"{}"},
            ),
            attack("symlink-tests", fail, "a symlink to the verifier's own files", symlinks={name: "/tests/task.json"}),
            attack("symlink-dev-zero", fail, "a symlink to /dev/zero (endless input)", symlinks={name: "/dev/zero"}),
            attack("fifo", fail, "a named pipe that blocks any reader", agent_script=f"mkfifo /app/{name}"),
        ]
    )


def _map_ints(value, fn):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return fn(value)
    if isinstance(value, list):
        return [_map_ints(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_ints(v, fn) for k, v in value.items()}
    return value


def _replace_first_int(text: str, token: str) -> str:
    """``token`` in place of the first integer of ``text`` or, if it has none, of its first string value."""
    out = re.sub(r"(?<![\w.])\d+(?![\w.])", token, text, count=1)
    if out == text:
        out = re.sub(r'(?:(?<=\[)|(?<=, )|(?<=: ))"(?:[^"\\]|\\.)*"(?!:)', token, text, count=1)
    return out
