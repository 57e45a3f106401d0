"""The one base class of errors the user can fix: what the command line shows as a single line.

Every error about the user's input or files (an unknown problem, a broken row,
a file that would be replaced, an export option that makes no sense) is a
:class:`UserError` subclass, defined next to the code that raises it. The CLI
prints a UserError as one ``Error:`` line and exits non-zero; any other
exception is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A problem with the user's input or files: one line, shown without a traceback."""
