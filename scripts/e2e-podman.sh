#!/usr/bin/env bash
# The attack suite under podman and under the bubblewrap stand-in, side by side.
#
#   sudo bash scripts/e2e-podman.sh            (as root, from anywhere; takes an hour or more)
#
# Not part of CI and not called by the tests. What it does:
#   1. installs what is missing: podman, runc, debootstrap (apt) and podman-compose 1.x
#      (PyPI, into the project's .venv);
#   2. sets runc and raised ulimits in /etc/containers/containers.conf (crun fails on
#      cgroups and on raising limits on these machines);
#   3. builds a local Debian base image with debootstrap (Debian packages only, plus this
#      machine's CA certificates from /usr/local/share/ca-certificates, so that image
#      builds reach PyPI and Debian through a TLS-inspecting egress) and `podman import`s
#      it: no container registry is needed. It has python3 at /usr/local/bin/python3 (as
#      in the python images the tasks are written for), python3-venv and pip;
#   4. exports one task per kind (level-1 and level-2 job shop, one modelling spec, one
#      RetailOpt row when a RetailOpt-190 file is found) in both verifier modes, on that
#      base image;
#   5. runs `orharbor check --attacks` on every task, once with the bubblewrap
#      environment and once with `--env podman`, keeping Harbor's job folders;
#   6. prints every policy's reward under podman and under bubblewrap, and flags any attack
#      that scores HIGHER under bubblewrap: the stand-in must never be more lenient than a
#      real container engine. Exit status 1 if one does, 2 if some trial ran on one side
#      only (nothing to compare), else 0.
#
# THE ONE DEVIATION, AND WHY: separate-mode tasks declare their verifier container
# `network_mode = "no-network"`. Harbor's docker and podman environments can take a
# container offline only through Harbor's egress-control sidecar, and they enable it only
# when a kernel-probe container (alpine, pulled by digest) runs; the sidecar image itself
# is built FROM a gost image pulled by digest. With no registry reachable the probe
# fails, `capabilities.disable_internet` is False, and Harbor refuses the verifier
# environment in BaseEnvironment.__init__ ("network_mode='no-network' is not supported by
# podman environment"), after the agent has run: every separate-mode trial ends without
# a reward. A locally built sidecar image would not help: PodmanEnvironment skips the
# sidecar build when its image exists, but the kernel probe (a fixed digest that cannot
# be reproduced by `podman import`) decides first. So this script exports the
# separate-mode tasks with `orharbor export --verifier-network public`, a testing-only
# option, and runs BOTH environments on those same task folders, so the comparison is
# like for like. Step 4b shows Harbor's refusal of the real export (one oracle trial).
#
# Run it on a quiet machine. Podman (netavark) keeps each container's network namespace as
# a mount under /run/netns; on the machine this was written on those mounts vanished within
# seconds while other bubblewrap sandboxes ran (slirp4netns --enable-sandbox, started as root,
# was the likeliest cause), and a container start then fails with "netavark: setns: Invalid
# argument". Step 5b retries such trials once.
#
# Settings (environment variables):
#   E2E_WORK        work folder (default: a new folder under /tmp); tasks, job folders, logs
#   E2E_BASE_IMAGE  local image name (default localhost/orharbor-e2e-base:bookworm-3)
#   E2E_REBUILD=1   rebuild the base image even if it exists
#   E2E_MIRROR      Debian mirror for debootstrap (default: http://deb.debian.org/debian)
#   E2E_WORKERS     trials at once (default 2)
#   E2E_RETAILOPT   a RetailOpt-190 JSONL file (default: ../shared/data/retailopt190/v0.jsonl
#                   beside the repository, if there); E2E_RETAILOPT=none leaves RetailOpt out
#   E2E_MODES       verifier modes to run (default "shared separate")
#   E2E_ENVS        environments to run (default "bubblewrap podman")
#   E2E_SKIP_REFUSAL=1  skip step 4b
#   E2E_CHECK=0     skip step 5: retry and compare the job folders an earlier run left in E2E_WORK
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY="$REPO/.venv/bin/python"
WORK=${E2E_WORK:-$(mktemp -d /tmp/orharbor-e2e-XXXXXX)}
BASE_IMAGE=${E2E_BASE_IMAGE:-localhost/orharbor-e2e-base:bookworm-3}
MIRROR=${E2E_MIRROR:-http://deb.debian.org/debian}
WORKERS=${E2E_WORKERS:-2}
MODES=${E2E_MODES:-shared separate}
ENVS=${E2E_ENVS:-bubblewrap podman}
RETAILOPT=${E2E_RETAILOPT:-$REPO/../shared/data/retailopt190/v0.jsonl}
QUICK_RETAIL=retail_f1_base_v0   # solves in well under a second
export PATH="$REPO/.venv/bin:$PATH"
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True

# Podman commands that start a container, retried: see "Run it on a quiet machine" above.
retry() { local n; for n in 1 2 3; do "$@" && return 0; echo "(attempt $n failed: $*)" >&2; sleep 2; done; return 1; }
step() { printf '\n== %s %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { echo "e2e-podman: $*" >&2; exit 3; }

[ "$(id -u)" = 0 ] || die "run as root (podman as root, apt-get, debootstrap, bubblewrap's uid mapping)"
[ -x "$PY" ] || die "no $PY: create the project's venv first (bash scripts/setup.sh)"
mkdir -p "$WORK"
echo "work folder: $WORK"

# ------------------------------------------------------------------ 1. tools
step "1. podman, runc, debootstrap, podman-compose"
missing=()
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
[ -x "$REPO/.venv/bin/podman-compose" ] || "$PY" -m pip install -q 'podman-compose>=1,<2'
podman --version
podman-compose --version 2>/dev/null | tail -1

# ------------------------------------------------------------------ 2. containers.conf
step "2. /etc/containers/containers.conf: runc, ulimits"
CONF=/etc/containers/containers.conf
if ! grep -qs 'orharbor-e2e' "$CONF"; then
    if [ -s "$CONF" ] && grep -qvE '^\s*(#|$)' "$CONF"; then
        cp "$CONF" "$CONF.before-orharbor-e2e"
        die "$CONF already has settings (copied to $CONF.before-orharbor-e2e); add by hand:
[containers]
default_ulimits = [\"nofile=16384:16384\", \"nproc=16384:16384\"]
[engine]
runtime = \"runc\""
    fi
    mkdir -p /etc/containers
    cat > "$CONF" <<'EOF'
# written by orharbor's scripts/e2e-podman.sh (orharbor-e2e): crun fails on cgroups and on
# raising limits on these machines; runc works.
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]

[engine]
runtime = "runc"
EOF
fi
echo "OCI runtime: $(podman info --format '{{.Host.OCIRuntime.Name}}')"

# ------------------------------------------------------------------ 3. base image
step "3. base image $BASE_IMAGE (debootstrap + podman import)"
if [ "${E2E_REBUILD:-0}" = 1 ] || ! podman image exists "$BASE_IMAGE"; then
    ROOTFS="$WORK/rootfs"
    rm -rf "$ROOTFS"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
        bookworm "$ROOTFS" "$MIRROR" > "$WORK/debootstrap.log" 2>&1 \
        || { tail -20 "$WORK/debootstrap.log"; die "debootstrap failed (log: $WORK/debootstrap.log)"; }
    cat > "$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
    # The machine's CA certificates: image builds reach PyPI and Debian through them.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
    fi
    chroot "$ROOTFS" update-ca-certificates > /dev/null
    # python3 where the python images have it (test.sh runs /usr/local/bin/python3): the
    # interpreter binary itself is copied there, so that a record of /usr/local made at build
    # time holds a real file (it finds its standard library under /usr, its build prefix); and a
    # pip that installs into the image's own python, as in those images (no PEP 668 marker).
    version=$(basename "$(readlink -f "$ROOTFS/usr/bin/python3")")
    cp -p "$ROOTFS/usr/bin/$version" "$ROOTFS/usr/local/bin/$version"
    ln -sf "$version" "$ROOTFS/usr/local/bin/python3"
    ln -sf "$version" "$ROOTFS/usr/local/bin/python"
    ln -sf /usr/bin/pip3 "$ROOTFS/usr/local/bin/pip3"
    ln -sf /usr/bin/pip3 "$ROOTFS/usr/local/bin/pip"
    rm -f "$ROOTFS"/usr/lib/python3*/EXTERNALLY-MANAGED
    # Debian's python3 loads /usr/lib/python3.X/sitecustomize.py (-> /etc/python3.X/); the python
    # images have none, and the verifier scores any sitecustomize as tampering.
    rm -f "$ROOTFS"/usr/lib/python3*/sitecustomize.py "$ROOTFS"/etc/python3*/sitecustomize.py
    rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin
    tar -C "$ROOTFS" --numeric-owner -c . | podman import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        --change 'ENV PIP_DEFAULT_TIMEOUT=180' \
        --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" > /dev/null
    rm -rf "$ROOTFS"
fi
retry podman run --rm "$BASE_IMAGE" /usr/local/bin/python3 -c 'import sys, venv, ensurepip; print("base image python", sys.version.split()[0], "prefix", sys.prefix)'

step "3a. the base image check (orharbor.image_facts.base_image) on a real engine: this image passes, one laid out otherwise is refused"
"$PY" -c 'import sys; from orharbor.image_facts.base_image import probe; r = probe("podman", sys.argv[1]); print(r or "passes"); sys.exit(r is not None)' "$BASE_IMAGE"
BAD_IMAGE=localhost/orharbor-e2e-bad-base:test
printf 'FROM %s\nRUN ln -sf /usr/bin/python3 /usr/local/bin/python3\n' "$BASE_IMAGE" \
    | podman build --quiet --tag "$BAD_IMAGE" - > /dev/null
if "$PY" -c 'import sys; from orharbor.image_facts.base_image import probe; r = probe("podman", sys.argv[1]); print(r); sys.exit(r is None)' "$BAD_IMAGE"; then
    echo "base image check: the absolute link was refused in one line"
else
    echo "base image check: $BAD_IMAGE (python3 an absolute link) was NOT refused" >&2; exit 1
fi
podman rmi -f "$BAD_IMAGE" > /dev/null

# ------------------------------------------------------------------ 4. tasks
step "4. export: job shop level 1 and 2, one spec, one RetailOpt row; modes: $MODES"
SRC="$WORK/src"
rm -rf "$SRC"; mkdir -p "$SRC/specs/golden"
JOBSHOP="$REPO/src/orharbor/datasets/data/jobshop.jsonl"
{ grep -m1 '"level":1' "$JOBSHOP"; grep -m1 '"level":2' "$JOBSHOP"; } > "$SRC/jobshop.jsonl"
SPEC=production_planning_lp
cp "$REPO/src/orharbor/modelling/specs/$SPEC.yaml" "$SRC/specs/"
cp "$REPO/src/orharbor/modelling/specs/golden/$SPEC.py" "$SRC/specs/golden/"
[ -d "$REPO/src/orharbor/modelling/specs/files/$SPEC" ] && mkdir -p "$SRC/specs/files" \
    && cp -r "$REPO/src/orharbor/modelling/specs/files/$SPEC" "$SRC/specs/files/"
datasets=(--dataset "$SRC/jobshop.jsonl")
if [ "$RETAILOPT" != none ] && [ -f "$RETAILOPT" ]; then
    "$PY" -m orharbor import retailopt "$RETAILOPT" --out "$SRC/retail-all.jsonl" > /dev/null
    grep -m1 "\"scenario_id\": *\"$QUICK_RETAIL\"" "$SRC/retail-all.jsonl" > "$SRC/retail.jsonl" \
        && datasets+=(--dataset "$SRC/retail.jsonl")
else
    echo "no RetailOpt-190 file ($RETAILOPT): RetailOpt left out"
fi
for mode in $MODES; do
    network=()
    # See THE ONE DEVIATION above: testing only, never a benchmark export.
    [ "$mode" = separate ] && network=(--verifier-network public)
    "$PY" -m orharbor export "${datasets[@]}" --specs "$SRC/specs" --out "$WORK/tasks-$mode" --force \
        --verifier-mode "$mode" --base-image "$BASE_IMAGE" "${network[@]}" 2>&1 | grep -v '^exporting' || true
done

# ------------------------------------------------------------------ 4a. warm the build cache
# Harbor ends every trial with `compose down --rmi local`, which deletes the trial's image and,
# when nothing else holds them, its layers: each trial would install apt packages and pip
# wheels again. One tagged image per Dockerfile keeps those layers, so trial builds hit the cache.
step "4a. build every task image once under a tag of its own (the layer cache for the trials)"
for mode in $MODES; do
    for task in "$WORK/tasks-$mode"/*/; do
        name=$(basename "$task")
        retry podman build -q -t "localhost/orharbor-e2e-cache/$name-$mode:env" "$task/environment" > /dev/null \
            || die "building $task/environment failed"
        if [ -f "$task/tests/Dockerfile" ]; then
            retry podman build -q -t "localhost/orharbor-e2e-cache/$name-$mode:verifier" "$task/tests" > /dev/null \
                || die "building $task/tests failed"
        fi
        echo "built $name ($mode)"
    done
done

# ------------------------------------------------------------------ 4b. the obstacle, shown
if [[ " $MODES " == *" separate "* && " $ENVS " == *" podman "* && "${E2E_SKIP_REFUSAL:-0}" != 1 ]]; then
    step "4b. what Harbor does with the real separate-mode export (verifier no-network) on podman"
    "$PY" -m orharbor export --dataset "$SRC/jobshop.jsonl" --out "$WORK/tasks-nonet" --force \
        --base-image "$BASE_IMAGE" 2>&1 | grep -v '^exporting' || true
    first=$(ls -d "$WORK"/tasks-nonet/*/ | head -1)
    "$PY" - "$first" <<'EOF' || true
import sys
from pathlib import Path
from orharbor.check import check_tasks
result = check_tasks(Path(sys.argv[1]), only=("oracle",), env="podman")[0]
for p in result.policies:
    print(f"oracle on podman, verifier no-network: reward {p.reward}; {p.error or 'no error'}")
EOF
fi

# ------------------------------------------------------------------ 5. check
declare -A ENV_ARG=([bubblewrap]="orharbor.harbor_env:BubblewrapEnvironment" [podman]="podman")
[ "${E2E_CHECK:-1}" = 0 ] && echo "E2E_CHECK=0: step 5 left out, the job folders already in $WORK are compared"
for env in $ENVS; do
    [ "${E2E_CHECK:-1}" = 0 ] && break
    for mode in $MODES; do
        step "5. orharbor check --attacks --env ${ENV_ARG[$env]} ($mode verifier)"
        rm -rf "$WORK/jobs-$env-$mode"   # one job folder per run, read back in step 6
        set +e
        "$PY" -m orharbor check "$WORK/tasks-$mode" --attacks -j "$WORKERS" --env "${ENV_ARG[$env]}" \
            --jobs-dir "$WORK/jobs-$env-$mode" 2>&1 | tee "$WORK/check-$env-$mode.log"
        echo "exit status ${PIPESTATUS[0]} (non-zero: some task failed its check; the table below compares)"
        set -e
    done
done

# ------------------------------------------------------------------ 5b. one retry
# A trial that ended without any reward (the engine failed to start a container: netavark,
# runc or compose errors) is run once more, so that one flaky start does not leave an
# attack uncompared. Its new result goes in jobs-<env>-<mode>-retry; step 6 prefers a reward.
for env in $ENVS; do
    for mode in $MODES; do
        rm -rf "$WORK/jobs-$env-$mode-retry"
        "$PY" - "$WORK" "$env" "$mode" "${ENV_ARG[$env]}" "$WORKERS" <<'EOF' || true
import json
import sys
from pathlib import Path

from orharbor.check import check_tasks

work, env, mode, env_arg, workers = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
tasks = sorted((p.name for p in (work / f"tasks-{mode}").iterdir() if (p / "task.toml").is_file()),
               key=len, reverse=True)
missing: dict[str, list[str]] = {}
for result in (work / f"jobs-{env}-{mode}").glob("check-*/*/result.json"):
    data = json.loads(result.read_text())
    if ((data.get("verifier_result") or {}).get("rewards") or {}).get("reward") is None:
        trial = result.parent.name
        task = next((t for t in tasks if trial.startswith(t + "__")), None)
        if task:
            missing.setdefault(task, []).append(trial[len(task) + 2:])
for task, policies in sorted(missing.items()):
    print(f"retrying on {env} ({mode}): {task}: {', '.join(sorted(policies))}", flush=True)
    check_tasks(work / f"tasks-{mode}" / task, jobs=workers, attacks=True, only=tuple(policies),
                jobs_dir=work / f"jobs-{env}-{mode}-retry", env=env_arg)
EOF
    done
done

# ------------------------------------------------------------------ 6. side by side
step "6. rewards, podman vs bubblewrap"
"$PY" - "$WORK" $MODES <<'EOF'
"""Read every trial's result.json from both environments' Harbor job folders; compare."""
import json
import sys
from pathlib import Path

work, modes = Path(sys.argv[1]), sys.argv[2:]
TOL = 1e-9


def rewards(env: str, mode: str) -> dict:
    tasks = sorted((p.name for p in (work / f"tasks-{mode}").iterdir() if (p / "task.toml").is_file()),
                   key=len, reverse=True)
    found = {}
    results = [*(work / f"jobs-{env}-{mode}").glob("check-*/*/result.json"),
               *(work / f"jobs-{env}-{mode}-retry").glob("check-*/*/result.json")]  # a retry last
    for result in results:
        data = json.loads(result.read_text())
        trial = result.parent.name
        task = next((t for t in tasks if trial.startswith(t + "__")), None)
        if task is None:
            continue
        verifier = data.get("verifier_result") or {}
        reward = (verifier.get("rewards") or {}).get("reward")
        error = (data.get("exception_info") or {}).get("exception_type")
        key = (task, trial[len(task) + 2:])
        if reward is not None or key not in found or found[key][0] is None:
            found[key] = (reward, error)
    return found


def cell(value) -> str:
    reward, error = value if value else (None, "not run")
    return f"{reward:+.3f}" if isinstance(reward, (int, float)) else (error or "no reward")


rows, higher, one_sided = [["mode", "task", "policy", "podman", "bubblewrap", ""]], [], []
for mode in modes:
    podman, bwrap = rewards("podman", mode), rewards("bubblewrap", mode)
    for key in sorted(set(podman) | set(bwrap)):
        p, b = podman.get(key), bwrap.get(key)
        pr = p[0] if p else None
        br = b[0] if b else None
        flag = ""
        if isinstance(pr, (int, float)) and isinstance(br, (int, float)):
            if br > pr + TOL:
                flag = "HIGHER UNDER BUBBLEWRAP"
                higher.append((mode, *key))
            elif abs(br - pr) > TOL:
                flag = "lower under bubblewrap"
        elif pr is not None or br is not None:
            flag = "one side only"
            one_sided.append((mode, *key))
        rows.append([mode, key[0], key[1], cell(p), cell(b), flag])
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for r in rows:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
print(f"\n{len(rows) - 1} trials compared; {len(higher)} higher under bubblewrap; {len(one_sided)} with a reward "
      f"on one side only")
for mode, task, policy in higher:
    print(f"HIGHER UNDER BUBBLEWRAP: {mode} {task} {policy}")
sys.exit(1 if higher else 2 if one_sided else 0)
EOF
