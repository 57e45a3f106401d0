"""Append to the verifier's bundle (or one of its modules, in a flat tests folder): /tests must be read-only to solve.py."""


def capability():
    for path in ("/tests/orharbor.zip", "/tests/orharbor/verifiers/reward.py"):
        try:
            with open(path, "a") as f:
                f.write("\n")
            return True
        except OSError:
            pass
    return False
