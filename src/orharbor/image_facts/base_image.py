"""What a task's base image must provide, and the check that names what one lacks before anything builds on it.

Every Dockerfile orharbor writes builds on ``--base-image`` (default: a
python:3.X-slim image) and relies on its layout: the verifier's interpreter
record (the RUN line after the check) lists ``/usr/local/bin/python3`` as a link to
``python3.X`` beside it (and the standard library, where it is in
``/usr/local/lib/python3.X``); the solver venv needs ``venv`` and ``ensurepip``;
the record needs GNU find and coreutils. An image laid out otherwise (``/usr/local/bin/python3`` an absolute
link to Debian's ``/usr/bin/python3``, say) used to fail deep inside that
RUN line with ``exit status 1``. Now :data:`CHECK` runs first, right after
``FROM``, in every Dockerfile, so any engine or provider that builds the task
stops at its first step with one line naming what is missing; ``orharbor images``
runs the same check in the image through the engine before it builds anything.
"""

from __future__ import annotations

import subprocess

#: What a base image must provide (``export --help``'s wording).
REQUIREMENTS = (
    "CPython at /usr/local/bin/python3, a link to python3.X beside it, with venv and ensurepip "
    "(the python:3.X-slim images; the verifier's interpreter record also covers the standard library "
    "when it is in /usr/local/lib/python3.X, as there); bash, GNU find, GNU stat, sha256sum, sort, "
    "comm, awk, sed, xargs, readlink, apt-get and useradd"
)

#: The check, in POSIX sh without ``&&`` (the bubblewrap environment reads a RUN line's ``&&`` as separate
#: steps). ``$R`` roots the interpreter paths (empty in an image; a folder in the tests' fake layouts). It
#: prints one line naming everything missing and fails, or prints nothing.
CHECK = r"""m=''; v=$(readlink "$R/usr/local/bin/python3" 2>/dev/null) || v='';
case "$v" in python3.*) n=${v#python3.} ;; *) n=x ;; esac;
case "$n" in
  ''|*[!0-9]*) m="$m; /usr/local/bin/python3 as a link to python3.X beside it (it is ${v:-no link})" ;;
  *) if [ -x "$R/usr/local/bin/$v" ]; then
       "$R/usr/local/bin/$v" -c 'import venv, ensurepip' >/dev/null 2>&1 || m="$m; venv and ensurepip for $v";
     else m="$m; /usr/local/bin/$v"; fi ;;
esac;
for c in bash find stat sha256sum sort comm awk sed xargs readlink apt-get useradd; do command -v "$c" >/dev/null 2>&1 || m="$m; $c"; done;
find / -maxdepth 0 -printf '' >/dev/null 2>&1 || m="$m; GNU find (find -printf)";
stat -c '%.9Z' / >/dev/null 2>&1 || m="$m; GNU stat (stat -c %.9Z)";
if [ -n "$m" ]; then echo "orharbor: this base image cannot carry an orharbor task, it lacks: ${m#; }" >&2; exit 1; fi"""


def dockerfile_step() -> str:
    """The Dockerfile RUN step of :data:`CHECK` (continued lines; Docker joins them into one shell line)."""
    return (
        "# The base image must provide what the steps below rely on: one line naming what it lacks, if not.\n"
        "RUN " + " \\\n    ".join(line.strip() for line in CHECK.splitlines())
    )


def probe(engine: str, image: str) -> str | None:
    """Run :data:`CHECK` in ``image`` with ``engine`` (``podman``, ``docker``): None if it passes, else its line.

    OSError or subprocess errors propagate: an engine that cannot run the image
    is the caller's to report."""
    done = subprocess.run(
        [engine, "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", image, "-c", CHECK],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode == 0:
        return None
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.startswith("orharbor: ")]
    return (
        lines[-1]
        if lines
        else f"{engine} could not run /bin/sh in {image}: {(done.stderr.strip().splitlines() or ['no output'])[-1]}"
    )
