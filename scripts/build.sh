#!/usr/bin/env bash
# build.sh: builds ./cmd/extractbench with the commit it was built from
# linked in (-X main.commit), so that `extractbench version` names it even
# where the build records no VCS stamp (-buildvcs=false, a copy without .git).
#
# Usage: scripts/build.sh [OUT]   (OUT defaults to ./extractbench; COMMIT=...
#                                  overrides the commit, e.g. in CI)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=${1:-./extractbench}
commit=${COMMIT:-$(scripts/commit.sh)}
go build -trimpath -ldflags "-X main.commit=$commit" -o "$out" ./cmd/extractbench
"$out" version
