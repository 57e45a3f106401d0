"""Write the reward files from solve.py: the reward folder must be closed to it.

Each file is written under a fresh name and renamed into place, so a run can
replace what an earlier run (another uid) left there, as long as the folder lets it.
"""


def capability():
    import os

    ok = False
    for path, text in (("/logs/verifier/reward.json", '{"reward": 1.0}'), ("/logs/verifier/reward.txt", "1.0")):
        temporary = f"{path}.{os.getpid()}"
        try:
            with open(temporary, "w") as f:
                f.write(text)
            os.replace(temporary, path)
            ok = True
        except OSError:
            pass
    return ok
