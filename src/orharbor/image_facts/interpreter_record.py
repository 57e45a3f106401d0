"""The interpreter record: what the image build writes about the verifier's Python, and the bytecode it compiles.

test.sh runs the verifier with the image's ``/usr/local/bin/python3``, and
only after comparing what that interpreter reads and imports from
``/usr/local`` with this record. The record is the RUN step right after the
base image check in every Dockerfile orharbor writes, the same text in all of
them, so Docker (and the bubblewrap environment's build cache) builds it once
for every task.

The step also compiles, once, the bytecode of the standard-library modules the
verifier imports, into :data:`PYCACHE` (``python3 -X pycache_prefix``: the
file for ``/usr/local/lib/python3.X/json/decoder.py`` is
``PYCACHE/usr/local/lib/python3.X/json/decoder.cpython-3X.pyc``). The verifier
reads it there with ``-B`` (nothing written) instead of compiling those modules
from source at every verify. Every file under :data:`PYCACHE` is listed,
hashed and keyed in the record like the standard library, so a planted or
edited ``.pyc`` (an unchecked hash-based one is loaded without a look at its
source) is refused before Python starts.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

#: The folder the record writes; the three files test.sh compares against; the compiled bytecode.
RECORD_DIR = "/usr/local/share/orharbor"
RECORD_FILES = ("interpreter.list", "interpreter.sha256", "interpreter.keys")
PYCACHE = f"{RECORD_DIR}/pycache"
#: How the record's RUN command begins (the cache and the tests find the step by it).
RECORD_START = f"set -e; mkdir -p {RECORD_DIR};"
#: What the record runs (``python3 -I -S -X pycache_prefix=PYCACHE -c COMPILE module...``) to compile the
#: modules named after it and what they import; a module the image's Python lacks is left out.
COMPILE = (
    "import importlib, importlib.util, sys; "
    "[importlib.import_module(m) for m in sys.argv[1:] if importlib.util.find_spec(m.split('.')[0])]"
)

_PACKAGE = Path(__file__).resolve().parents[1]  # orharbor/, whose verifier files the record reads


def verifier_sources() -> list[Path]:
    """Every file the verifier bundle may run in a task: verify.py, the verifiers, each problem's verify.py."""
    return [
        _PACKAGE / "task_template" / "verify.py",
        *sorted((_PACKAGE / "verifiers").glob("*.py")),
        *sorted((_PACKAGE / "problem_modules").glob("*/verify.py")),
    ]


#: Modules Python itself imports while the verifier runs, named in no import statement: the codec of a
#: stream whose locale is C (the sandbox's commands run without LANG).
RUNTIME_MODULES = ("encodings.ascii",)


@functools.cache  # the sources are the installed package's: one scan per process (0.14 s; every Dockerfile asks)
def verifier_stdlib() -> tuple[str, ...]:
    """The standard-library modules the verifier bundle imports by name, and :data:`RUNTIME_MODULES`, sorted
    (what they import follows at build)."""
    names: set[str] = set(RUNTIME_MODULES)
    for source in verifier_sources():
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    return tuple(sorted(n for n in names if n.split(".")[0] in sys.stdlib_module_names))


def _listing() -> str:
    """The shell commands that list, one line each, what python3 reads from /usr/local (run there; ``$v`` and
    ``$z`` set). test.sh's ``interpreter_entries`` runs the same finds; a test holds them together."""
    entry = r"\( -type f -printf '%y %s %p\n' -o -printf '%y %p %l\n' \)"
    return (
        "{ find . bin lib -mindepth 1 -maxdepth 1 \\( -name pyvenv.cfg -o -name '*._pth' -o -name pybuilddir.txt "
        "-o -name 'libpython*' -o -path bin/python3 -o -path \"bin/$v\" -o -path bin/lib -o -path bin/lib64 "
        f'-o -path "lib/$v" -o -path "lib/$z" \\) {entry}; '
        'find "lib/$v" -mindepth 1 \\( -path "lib/$v/site-packages" -o -path "lib/$v/dist-packages" '
        '-o -path "lib/$v/test" '
        '-o -path "lib/$v/idlelib" -o -path "lib/$v/tkinter" -o -path "lib/$v/turtledemo" '
        '-o -path "lib/$v/ensurepip" -o -path "lib/$v/config-*" -o -name __pycache__ \\) -prune '
        f"-o {entry}; "
        f"find {PYCACHE.removeprefix('/usr/local/')} -mindepth 1 {entry}; }}"
    )


#: The regular files the record lists, one path a line (run in /usr/local); and each one's key (test.sh the same).
_LISTED_FILES = f"sed -n 's/^f [0-9]* //p' {RECORD_DIR.removeprefix('/usr/local/')}/interpreter.list"
_KEYS = "xargs -r -d '\\n' stat -c '%i %s %.9Y %.9Z %n' --"


def keys_command() -> str:
    """The shell command (run in /usr/local) that writes the record's keys: inode, size, mtime and ctime of every
    listed file."""
    share = RECORD_DIR.removeprefix("/usr/local/")
    return f"{_LISTED_FILES} | {_KEYS} | LC_ALL=C sort > {share}/interpreter.keys"


def rekey_command() -> str:
    """The shell command (run in /usr/local) that keys the record's own files again (its bytecode, as they are
    now) and keeps the build's keys of every other file. The bubblewrap environment runs it after copying a
    cached record into a sandbox, where the copies have inodes and times of their own (Docker's layers keep
    theirs); the standard library is not keyed again, so a change to it since the build is still hashed, and
    refused."""
    share = RECORD_DIR.removeprefix("/usr/local/")
    keys = f"{share}/interpreter.keys"
    return (
        f"{{ grep -v '^[0-9]* [0-9]* [0-9.]* [0-9.]* {share}/' {keys}; "
        f"{_LISTED_FILES} | grep '^{share}/' | {_KEYS}; }} | LC_ALL=C sort > {keys}.new; mv -f {keys}.new {keys}"
    )


def command() -> str:
    """The record's shell command, one line (POSIX sh, no ``&&``: the bubblewrap environment splits on it)."""
    share = RECORD_DIR.removeprefix("/usr/local/")
    files = " ".join(f"{share}/{name}" for name in RECORD_FILES)
    modules = " ".join(verifier_stdlib())
    return (
        f'{RECORD_START} cd /usr/local; v=$(readlink bin/python3); z=$(echo "$v" | tr -d .).zip; '
        f"mkdir -p {PYCACHE}; "
        f'bin/python3 -I -S -X pycache_prefix={PYCACHE} -c "{COMPILE}" {modules}; chmod -R go-w {PYCACHE}; '
        f"{_listing()} | LC_ALL=C sort > {share}/interpreter.list; "
        f"{_LISTED_FILES} | xargs -r -d '\\n' sha256sum -- > {share}/interpreter.sha256; "
        f"{keys_command()}; "  # last of all that touches a listed file (a chmod sets its ctime)
        f"chmod 644 {files}; test -s {share}/interpreter.sha256"
    )


def dockerfile_step() -> str:
    """The record as a commented Dockerfile RUN step (``$interpreter_record`` in the templates)."""
    return (
        "# The interpreter the verifier runs with, as built: test.sh compares /usr/local with this record\n"
        "# before Python starts (what python3 reads and imports there: the interpreter, libpython, the\n"
        "# standard library with lib-dynload, the names Python looks for beside them: pyvenv.cfg, ._pth,\n"
        "# pythonXY.zip...; not site-packages nor __pycache__), with the bytecode of the modules the verifier\n"
        f"# imports, compiled once into {PYCACHE}. Right after the base image check: these are\n"
        "# the base image's, and no later step writes there (pip goes to site-packages and venvs); one that\n"
        "# did would make the verifier refuse, never pass. So this layer is the same in every task's image.\n"
        "RUN " + command()
    )
