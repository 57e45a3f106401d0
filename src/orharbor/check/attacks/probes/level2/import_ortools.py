"""Import OR-Tools though the task forbids it: the solver interpreter must not have it."""


def capability():
    try:
        import ortools  # noqa: F401

        return True
    except ImportError:
        return False
