"""The collect hook: what Harbor runs as root in the agent's container before it takes anything out.

Harbor runs ``[[verifier.collect]]`` hooks in both verifier modes, after the agent
phase and the download of the agent's logs, before it downloads the artifacts and
before the verifier. Everything the agent left behind is still there then, and so
are its processes. The hook is POSIX shell using only what a Debian slim image has
(``awk``, ``find``, ``rm``, ``stat``: GNU findutils and coreutils), and it never fails
on what it finds:

1. It ends every process of a non-root user (by owner, three rounds: a process whose
   main thread exited looks like a zombie), so nothing changes the files below
   afterwards. Root's processes are the container's own and are left alone.
2. Shared mode only: it empties ``/logs/verifier`` whatever stands there (a folder,
   FIFO or symlink at ``test-stdout.txt`` would make Harbor's
   ``(/tests/test.sh) > /logs/verifier/test-stdout.txt`` fail or block until the
   verifier timeout, so the trial would end without a reward), and makes it
   root-owned ``0755``; it removes ``/tests`` entirely, so Harbor's upload of the real
   tests lands in a fresh folder.
3. It bounds what ``/logs/artifacts`` holds, which Harbor copies to the host and (in
   separate mode) on into the verifier with Python's recursive ``tarfile.add``: a
   tree deeper than :data:`ARTIFACTS_MAX_DEPTH`, with more than
   :data:`ARTIFACTS_MAX_ENTRIES` entries or more than :data:`ARTIFACTS_MAX_BYTES` in
   its files is replaced by an empty folder holding one note, :data:`LIMIT_NOTE`,
   that says which limit. The check stops at the first entry over a limit, so it
   reads at most ``ARTIFACTS_MAX_ENTRIES + 1`` entries whatever the tree. Then only
   folders and regular files remain (links, FIFOs, sockets and devices go) and every
   entry is readable (folders ``0755``, files ``0644``), so a host-side copy cannot
   be refused a folder.
4. It makes every declared artifact (task.toml ``artifacts``: ``/app/solution.json``,
   ``/app/solve.py``...) a regular file of at most :data:`DELIVERABLE_MAX_BYTES`, or
   removes it: a folder chain, symlink or FIFO there never reaches Harbor's host-side
   copy, and a missing deliverable scores the failure reward. An ancestor folder
   that is a symlink goes too.

Each ``rm -rf`` removes a folder chain of any depth. The hook starts with the process
loop (``for round ...``); the mutation tests in ``tests/test_attacks.py`` turn the
whole hook off by that prefix.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

#: /logs/artifacts may be at most this many folders deep (an entry at depth 33 is over).
ARTIFACTS_MAX_DEPTH = 32
#: ... hold at most this many entries (files, folders and anything else, at any depth) ...
ARTIFACTS_MAX_ENTRIES = 10_000
#: ... whose regular files hold at most this many bytes together (apparent size: a sparse
#: file counts at its full length, as a copy would write it).
ARTIFACTS_MAX_BYTES = 256 * 1024 * 1024
#: A declared artifact larger than this is removed (the verifier reads at most 32 MiB anyway).
DELIVERABLE_MAX_BYTES = 64 * 1024 * 1024
#: The note left in an emptied /logs/artifacts.
LIMIT_NOTE = "ORHARBOR-LIMIT.txt"
#: Seconds Harbor gives the hook; ending processes and removing even a large tree take far less.
HOOK_TIMEOUT_S = 120.0

VERIFIER_DIR, ARTIFACTS_DIR, TESTS_DIR = "/logs/verifier", "/logs/artifacts", "/tests"

#: Ends every process of a non-root user, three rounds (children forked meanwhile are caught next round).
KILL_NON_ROOT = (
    "for round in 1 2 3; do for p in /proc/[0-9]*; do "
    "u=$(awk '/^Uid:/ {print $2 + $3 + $4 + $5}' \"$p/status\" 2>/dev/null); "
    '[ -n "$u" ] && [ "$u" != 0 ] && kill -9 "${p#/proc/}" 2>/dev/null; done; done'
)


def _not_a_folder(path: str) -> str:
    """Shell test: ``path`` is a symlink, or exists and is not a folder."""
    return f"{{ [ -L {path} ] || {{ [ -e {path} ] && [ ! -d {path} ]; }}; }}"


def _fresh_folder(path: str) -> str:
    """Shell that leaves ``path`` an empty folder (emptied in place: it may be a mount point)."""
    return (
        f"if {_not_a_folder(path)}; then rm -rf -- {path}; fi; mkdir -p -- {path}; "
        f"find {path} -mindepth 1 -maxdepth 1 -exec rm -rf -- {{}} +"
    )


def _verifier_and_tests() -> str:
    """Shared mode: an empty root-owned /logs/verifier, and no /tests at all."""
    return (
        f"{_fresh_folder(VERIFIER_DIR)}; chown root:root {VERIFIER_DIR}; chmod 755 {VERIFIER_DIR}; "
        f"rm -rf -- {TESTS_DIR}; "
        f"if [ -d {TESTS_DIR} ]; then find {TESTS_DIR} -mindepth 1 -maxdepth 1 -exec rm -rf -- {{}} +; fi"
    )


def bounded_artifacts(
    folder: str = ARTIFACTS_DIR,
    max_depth: int = ARTIFACTS_MAX_DEPTH,
    max_entries: int = ARTIFACTS_MAX_ENTRIES,
    max_bytes: int = ARTIFACTS_MAX_BYTES,
) -> str:
    """Shell: ``folder`` within the limits (else emptied, with a note), holding folders and regular files only."""
    a = shlex.quote(folder)
    judge = (
        f"awk -v d={max_depth} -v n={max_entries} -v b={max_bytes} "
        '\'$1 > d {print "deeper than " d " levels"; exit} '
        'NR > n {print "with more than " n " entries"; exit} '
        '$2 == "f" {t += $3} t > b {print "with more than " b " bytes in its files"; exit}\''
    )
    note = (
        f"orharbor collect hook: {folder} held a tree $why; it was emptied before collection "
        f"(limits: {max_depth} levels, {max_entries} entries, {max_bytes} bytes)"
    )
    return (
        f"if {_not_a_folder(a)}; then rm -rf -- {a}; fi; mkdir -p -- {a}; "
        f"why=$(find {a} -mindepth 1 -printf '%d %y %s\\n' 2>/dev/null | {judge}); "
        f'if [ -n "$why" ]; then find {a} -mindepth 1 -maxdepth 1 -exec rm -rf -- {{}} +; '
        f"printf '%s\\n' \"{note}\" > {a}/{LIMIT_NOTE}; fi; "
        f"find {a} -mindepth 1 ! -type d ! -type f -exec rm -f -- {{}} +; "
        f"find {a} -mindepth 1 -type d -exec chmod 755 -- {{}} +; "
        f"find {a} -mindepth 1 -type f -exec chmod 644 -- {{}} +"
    )


def regular_deliverable(path: str) -> str:
    """Shell: ``path`` a regular file of at most DELIVERABLE_MAX_BYTES, readable; else gone."""
    target = PurePosixPath(path)
    if not target.is_absolute() or ".." in target.parts or len(target.parts) < 2:
        raise ValueError(f"an artifact must be an absolute path below /, got {path!r}")
    steps = []
    for ancestor in reversed(target.parents[:-1]):  # /app before /app/out, never / itself
        q = shlex.quote(str(ancestor))
        steps.append(f"if {_not_a_folder(q)}; then rm -rf -- {q}; fi")
    q = shlex.quote(str(target))
    steps += [
        f"if [ -L {q} ] || {{ [ -e {q} ] && [ ! -f {q} ]; }}; then rm -rf -- {q}; fi",
        f'if [ -f {q} ] && [ "$(stat -c %s -- {q})" -gt {DELIVERABLE_MAX_BYTES} ]; then rm -f -- {q}; fi',
        f"if [ -f {q} ]; then chmod a+r -- {q}; fi",
    ]
    return "; ".join(steps)


def collect_command(mode: str, artifacts: list[str], require_root: bool = False) -> str:
    """The hook's shell for a task in verifier ``mode`` ("separate" or "shared") declaring ``artifacts``.

    ``require_root``: the hook ends with a check that it ran as root, for a consumer that runs hooks as
    its default user and fails the rollout on a failed hook (``--for prime``). As anyone else it fails:
    its first step ends every non-root process, itself included (exit 137), and the check is the backstop.
    """
    if mode not in ("separate", "shared"):
        raise ValueError(f"verifier mode must be 'separate' or 'shared', got {mode!r}")
    parts = [KILL_NON_ROOT]
    if mode == "shared":
        parts.append(_verifier_and_tests())
    parts.append(bounded_artifacts())
    parts += [regular_deliverable(path) for path in artifacts]
    return "; ".join(parts) + ('; [ "$(id -u)" = 0 ]' if require_root else "; true")


def collect_hook(mode: str, artifacts: list[str], user: bool = True) -> dict:
    """task.toml's ``[[verifier.collect]]`` entry: :func:`collect_command`, run as root.

    Without ``user`` the entry names no user (the runtime's default, root in orharbor's
    images) and the command itself fails unless it ran as root.
    """
    if not user:
        return {"command": collect_command(mode, artifacts, require_root=True), "timeout_sec": HOOK_TIMEOUT_S}
    return {"command": collect_command(mode, artifacts), "user": "root", "timeout_sec": HOOK_TIMEOUT_S}
