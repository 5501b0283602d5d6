#!/usr/bin/env bash
# Fails, naming the files, when a source outside src/platform and src/engine includes SimGrid
# (simgrid/ or xbt/ headers): the other folders' libraries do not link it.
# usage: tests/check_simgrid_includes.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
offenders=$(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](simgrid|xbt)[/.]' src |
            grep -vE '^src/(platform|engine)/' || true)
if [ -n "$offenders" ]; then
  echo "SimGrid included outside src/platform and src/engine:" >&2
  echo "$offenders" >&2
  exit 1
fi
