#!/usr/bin/env bash
# commit-subjects.sh [BASE]: fails when a commit after BASE has a subject
# longer than 72 characters, so that `git log --oneline` stays readable and
# the detail goes in the body. BASE defaults to the first commit held to it;
# the history before it is left as it is.
# Exit 0 when every subject fits, 1 naming those that do not, 2 when it cannot run.
set -euo pipefail
base=${1:-6862183}
cd "$(dirname "$0")/.."
git rev-parse --verify -q "$base^{commit}" >/dev/null ||
  { echo "commit-subjects.sh: no commit $base here (a shallow clone?)" >&2; exit 2; }
export LC_ALL=C.UTF-8 # count characters, not bytes: subjects use → and ≤
long=$(git log --no-merges --format='%h %s' "$base..HEAD" | while IFS=' ' read -r hash subject; do
  if [ "${#subject}" -gt 72 ]; then echo "$hash $subject"; fi
done)
if [ -n "$long" ]; then
  printf 'commit-subjects.sh: subjects over 72 characters (put the detail in the body):\n%s\n' "$long" >&2
  exit 1
fi
