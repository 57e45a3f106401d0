#!/bin/bash
# orharbor verifier. Scores the deliverable with the standard library alone and
# always leaves /logs/verifier/reward.json behind, even if Python itself fails;
# then details.json says so, if it can still be written.
#
# It trusts nothing it did not bring. Before Python starts, the interpreter must
# be the one the image was built with: Python reads a pyvenv.cfg beside it or one
# folder up (its home= moves the whole standard library) and a ._pth file beside
# it or libpython (it replaces sys.path) even with -I -S, and runs modules of the
# standard library before any of ours. So test.sh refuses those files, and
# compares what Python reads and imports from /usr/local (the interpreter, libpython,
# the standard library with lib-dynload, the bytecode compiled for it; not site-packages,
# which -S keeps off sys.path, nor __pycache__, which pycache_prefix keeps unread) with the record
# the image build made (/usr/local/share/orharbor), hashing again only the files whose
# inode, size or times differ from the build's. Then verify.py checks /tests against
# tests/manifest.json before it imports anything from there.
chmod -R go-rwx /tests 2>/dev/null
# A symlink (dangling or not) or a file in place of the reward folder is replaced by a real folder.
real_logs_dir() {
  if [ -L /logs/verifier ] || { [ -e /logs/verifier ] && [ ! -d /logs/verifier ]; }; then rm -rf /logs/verifier; fi
  mkdir -p /logs/verifier
}
# fail ERROR: the failure reward, and details.json naming ERROR (other characters than these become ?).
fail() {
  local error=$${1//[^A-Za-z0-9 ._\/:;,()+=-]/?}
  local details='$fail_details'
  echo "$$error; scoring $fail_reward"
  real_logs_dir
  rm -rf /logs/verifier/reward.json /logs/verifier/reward.json.tmp \
    /logs/verifier/details.json /logs/verifier/details.json.tmp
  printf '%s\n' "$${details/@ERROR@/$${error:0:600}}" > /logs/verifier/details.json.tmp \
    && mv -f /logs/verifier/details.json.tmp /logs/verifier/details.json
  printf '%s\n' '$fail_json' > /logs/verifier/reward.json.tmp
  mv -f /logs/verifier/reward.json.tmp /logs/verifier/reward.json
}
# What python3 reads and imports from /usr/local (run there), one line each, sorted: the names
# it looks for beside the interpreter and libpython (pyvenv.cfg, ._pth, pybuilddir.txt, a lib/
# folder of its own, pythonXY.zip), the interpreter and its standard library; not site-packages
# (nor Debian's dist-packages, where its pip installs into /usr/local: only site reads either) nor __pycache__, nor the folders no verifier import reaches (test, idlelib, tkinter, turtledemo,
# ensurepip, config-*: the regression tests and the static library are most of the bytes); and the
# bytecode the build compiled for the verifier (share/orharbor/pycache). The image build recorded the
# same listing with the same find commands (the RUN after the base image check, written by
# orharbor/image_facts/interpreter_record.py); what else lands in /usr/local (an agent's npm -g) is not listed.
interpreter_entries() {
  local v z
  v=$$(readlink bin/python3) || v=python3-is-no-link
  z=$$(echo "$$v" | tr -d .).zip
  { find . bin lib -mindepth 1 -maxdepth 1 \( -name pyvenv.cfg -o -name '*._pth' -o -name pybuilddir.txt \
      -o -name 'libpython*' -o -path bin/python3 -o -path "bin/$$v" -o -path bin/lib -o -path bin/lib64 \
      -o -path "lib/$$v" -o -path "lib/$$z" \) \( -type f -printf '%y %s %p\n' -o -printf '%y %p %l\n' \)
    find "lib/$$v" -mindepth 1 \( -path "lib/$$v/site-packages" -o -path "lib/$$v/dist-packages" -o -path "lib/$$v/test" -o -path "lib/$$v/idlelib" -o -path "lib/$$v/tkinter" -o -path "lib/$$v/turtledemo" -o -path "lib/$$v/ensurepip" -o -path "lib/$$v/config-*" -o -name __pycache__ \) -prune \
      -o \( -type f -printf '%y %s %p\n' -o -printf '%y %p %l\n' \) 2>/dev/null
    find share/orharbor/pycache -mindepth 1 \( -type f -printf '%y %s %p\n' -o -printf '%y %p %l\n' \) 2>/dev/null
  } | LC_ALL=C sort
}
# Why the interpreter cannot be trusted; nothing when it can.
untrusted_interpreter() {
  local record=/usr/local/share/orharbor f listed now
  # Refused whatever the record says (an attacker who can plant them may rewrite the record too).
  for f in /etc/ld.so.preload /usr/local/pyvenv.cfg /usr/local/bin/pyvenv.cfg /usr/local/bin/*._pth \
      /usr/local/lib/*._pth /usr/local/bin/pybuilddir.txt /usr/local/bin/lib /usr/local/bin/lib64 \
      /usr/local/lib/python3*.zip; do
    if [ -e "$$f" ] || [ -L "$$f" ]; then echo "$$f is there"; return; fi
  done
  for f in "$$record/interpreter.list" "$$record/interpreter.sha256" "$$record/interpreter.keys"; do
    if [ -L "$$f" ] || [ ! -f "$$f" ] || [ "$$(stat -c %u "$$f")" != 0 ] || [ -n "$$(find "$$f" -perm /022)" ]; then
      echo "no root-owned $$f from the image build"; return
    fi
  done
  listed=$$(cat "$$record/interpreter.list") && now=$$(cd /usr/local && interpreter_entries) \
    || { echo "cannot list /usr/local"; return; }
  if [ "$$now" != "$$listed" ]; then
    echo "/usr/local differs from its image build record: $$(LC_ALL=C comm -3 <(printf '%s\n' "$$listed") \
      <(printf '%s\n' "$$now") | head -n 1)"
    return
  fi
  # Hash only what can have changed since the build: a file whose inode, size, mtime and ctime (to the
  # nanosecond) are those the build recorded is the file the build hashed, for any change to a file, or a
  # file put in its place, sets its ctime to the present, which no process in the container can set back.
  changed=$$(cd /usr/local && sed -n 's/^f [0-9]* //p' "$$record/interpreter.list" \
      | xargs -r -d '\n' stat -c '%i %s %.9Y %.9Z %n' -- | LC_ALL=C sort \
      | LC_ALL=C comm -13 "$$record/interpreter.keys" - | cut -d ' ' -f 5-) || { echo "cannot stat /usr/local"; return; }
  [ -n "$$changed" ] || return
  if ! now=$$(cd /usr/local && printf '%s\n' "$$changed" \
      | awk 'NR == FNR { want[$$0] = 1; next } substr($$0, 67) in want' - "$$record/interpreter.sha256" \
      | LC_ALL=C sha256sum --check --strict --quiet 2>/dev/null); then
    echo "/usr/local differs from its image build record: $$(printf '%s\n' "$$now" | head -n 1)"
  fi
}
real_logs_dir
reason=$$(untrusted_interpreter)
if [ -n "$$reason" ]; then
  fail "verifier environment tampered: $$reason"
  exit 0
fi
# -I: no environment, no script folder on sys.path; -S: no site, so .pth files and sitecustomize are
# inert; -B and the recorded pycache_prefix: bytecode read only from what the record covers (the
# build's, for the standard library), none from any __pycache__, none written.
out=$$(/usr/local/bin/python3 -I -S -B -X pycache_prefix=/usr/local/share/orharbor/pycache /tests/verify.py --in-container)
status=$$?
[ -z "$$out" ] || printf '%s\n' "$$out"
if [ "$$status" = 3 ]; then
  fail "$$(printf '%s\n' "$$out" | tail -n 1)"
elif [ "$$status" != 0 ]; then
  fail "verifier failed (test.sh fallback)"
fi
exit 0
