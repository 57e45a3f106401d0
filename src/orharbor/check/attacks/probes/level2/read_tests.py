"""Read the verifier's files, the references and the hidden instances: /tests must be closed to solve.py."""

import os


def capability():
    for path in ("/tests/task.json", "/tests/verify.py", "/tests/orharbor.zip", "/tests/orharbor/verifiers/score.py"):
        try:
            with open(path) as f:
                f.read(1)
            return True
        except OSError:
            pass
    try:
        return bool(os.listdir("/tests/eval"))
    except OSError:
        return False
