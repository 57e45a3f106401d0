#!/bin/bash
# orharbor verifier. Scores the deliverable with the standard library alone and
# always leaves /logs/verifier/reward.json behind, even if Python itself fails;
# then details.json says so, if it can still be written.
chmod -R go-rwx /tests 2>/dev/null
# A symlink (dangling or not) or a file in place of the reward folder is replaced by a real folder.
real_logs_dir() {
  if [ -L /logs/verifier ] || { [ -e /logs/verifier ] && [ ! -d /logs/verifier ]; }; then rm -rf /logs/verifier; fi
  mkdir -p /logs/verifier
}
real_logs_dir
if ! /usr/local/bin/python3 -I /tests/verify.py --in-container; then
  echo "verifier failed; scoring $fail_reward"
  real_logs_dir
  rm -rf /logs/verifier/reward.json /logs/verifier/reward.json.tmp \
    /logs/verifier/details.json /logs/verifier/details.json.tmp
  printf '%s\n' '$fail_details' > /logs/verifier/details.json.tmp \
    && mv -f /logs/verifier/details.json.tmp /logs/verifier/details.json
  printf '%s\n' '$fail_json' > /logs/verifier/reward.json.tmp
  mv -f /logs/verifier/reward.json.tmp /logs/verifier/reward.json
fi
exit 0
