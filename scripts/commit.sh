#!/usr/bin/env bash
# commit.sh: prints the short commit of the work tree, with -dirty when it
# has changes: what build.sh and image.sh link in as main.commit.
set -euo pipefail
rev=$(git rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; exit 0; }
if ! git diff --quiet HEAD -- 2>/dev/null; then
  rev+=-dirty
fi
echo "$rev"
