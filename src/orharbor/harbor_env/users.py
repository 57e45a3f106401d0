"""Users of the sandbox: the image's accounts, and a user namespace of its own for every sandbox.

Docker's default: no user namespace. Every container on a host shares the
host's uids, so the kernel's per-uid accounting is shared too: the processes a
uid may run (``RLIMIT_NPROC``), its keyrings, its inotify and message-queue
quotas. A hostile level-2 ``solve.py`` that holds its process quota made a
concurrent honest trial fail ("can't start new thread") because every verifier
hands out the same run uids.

Here every sandbox gets a user namespace of its own, mapping uids and gids
0..65535 to the same numbers on the host (:data:`MAPPED_IDS`), so file
ownership reads the same inside and out while the kernel counts each
namespace's uids apart (``struct ucounts`` is per namespace and uid). Root in
the sandbox holds its capabilities only over the sandbox's own namespaces,
never over the host's: stricter than Docker, which gives container root
Docker's default capabilities in the host's user namespace.

The image's accounts are the base image's system users (uid < 1000, and
nobody) plus the Dockerfile's ``useradd`` users from uid 1000 up, as
``useradd`` numbers them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: uids and gids 0..65535 map to themselves: the image's accounts, the verifier's run uids, nobody.
MAPPED_IDS = 65536
#: The first uid ``useradd`` gives in a Debian image.
FIRST_USER_UID = 1000
#: Docker's default capability set for root in a container; the sandbox's root gets exactly these.
DOCKER_CAPABILITIES = (
    "chown",
    "dac_override",
    "fowner",
    "fsetid",
    "kill",
    "setgid",
    "setuid",
    "setpcap",
    "net_bind_service",
    "net_raw",
    "sys_chroot",
    "mknod",
    "audit_write",
    "setfcap",
)


@dataclass(frozen=True)
class Account:
    """One user of the image."""

    name: str
    uid: int
    gid: int
    home: str

    @property
    def shell(self) -> str:
        if self.uid == 0 or (self.uid >= FIRST_USER_UID and self.name != "nobody"):
            return "/bin/bash"
        return "/usr/sbin/nologin"


def accounts(added: list[str], host_passwd: Path = Path("/etc/passwd")) -> dict[str, Account]:
    """name -> account: the base image's system users, then the Dockerfile's, from uid 1000 up."""
    table: dict[str, Account] = {}
    for line in host_passwd.read_text().splitlines():
        fields = line.split(":")
        if (
            len(fields) >= 6
            and fields[2].isdigit()
            and fields[3].isdigit()
            and (int(fields[2]) < FIRST_USER_UID or fields[0] == "nobody")
        ):
            table[fields[0]] = Account(fields[0], int(fields[2]), int(fields[3]), fields[5])
    table.setdefault("root", Account("root", 0, 0, "/root"))
    for offset, name in enumerate(added):
        uid = FIRST_USER_UID + offset
        table[name] = Account(name, uid, uid, f"/home/{name}")
    return table


def passwd(table: dict[str, Account]) -> str:
    """The sandbox's /etc/passwd."""
    return "".join(f"{a.name}:x:{a.uid}:{a.gid}::{a.home}:{a.shell}\n" for a in table.values())


def group(table: dict[str, Account], host_group: Path = Path("/etc/group")) -> str:
    """The sandbox's /etc/group: the base image's system groups, then one group per added user."""
    groups: dict[int, str] = {}
    for line in host_group.read_text().splitlines():
        fields = line.split(":")
        if len(fields) >= 3 and fields[2].isdigit() and (int(fields[2]) < FIRST_USER_UID or fields[0] == "nogroup"):
            groups[int(fields[2])] = fields[0]
    for account in table.values():
        groups.setdefault(account.gid, account.name)
    return "".join(f"{name}:x:{gid}:\n" for gid, name in sorted(groups.items()))


def shadow(table: dict[str, Account]) -> str:
    """The sandbox's /etc/shadow: every account locked, as in a Docker image."""
    return "".join(f"{a.name}:*:19000:0:99999:7:::\n" for a in table.values())


def map_user_namespace(pid: int, owner: int | None = None) -> None:
    """Map uids and gids 0..65535 of the user namespace ``pid`` lives in to the same host ids.

    ``pid`` is a process that has just unshared its user namespace and waits
    (bubblewrap's ``--userns-block-fd``); only its parent namespace's root may
    write the maps, once. An ``owner`` (the unprivileged uid bubblewrap runs
    as, :mod:`.owners`) is mapped too, as the first id past them (65536).
    """
    for kind in ("uid", "gid"):
        with open(f"/proc/{pid}/{kind}_map", "w", encoding="ascii") as f:
            f.write(id_map(owner))


def id_map(owner: int | None) -> str:
    """The uid and gid map: 0..65535 to themselves, and the owner (bubblewrap's own uid) as 65536."""
    return f"0 0 {MAPPED_IDS}\n" + (f"{MAPPED_IDS} {owner} 1\n" if owner is not None else "")


def identity_args(account: Account) -> list[str]:
    """``setpriv`` arguments that become ``account``: root keeps Docker's capabilities, others none."""
    if account.uid == 0:
        return [
            "setpriv",
            "--bounding-set",
            "-all," + ",".join(f"+{c}" for c in DOCKER_CAPABILITIES),
            "--inh-caps=-all",
        ]
    return [
        "setpriv",
        f"--reuid={account.uid}",
        f"--regid={account.gid}",
        "--clear-groups",
        "--bounding-set=-all",
        "--inh-caps=-all",
    ]


def bwrap_capability_args() -> list[str]:
    """bubblewrap arguments giving the sandbox's PID 1 Docker's default capabilities."""
    args = ["--cap-drop", "ALL"]
    for name in DOCKER_CAPABILITIES:
        args += ["--cap-add", f"CAP_{name.upper()}"]
    return args


def own_uid_is_root() -> bool:
    return os.geteuid() == 0
