#!/usr/bin/env bash
# Fails, naming the files, when a source outside src/platform and src/engine includes SimGrid
# (simgrid/ or xbt/ headers), or when src/engine/collective_lowering does: it belongs to
# trident_model, which does not link SimGrid.
# usage: tests/check_simgrid_includes.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
offenders=$(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](simgrid|xbt)[/.]' src |
            grep -vE '^src/(platform|engine)/' || true)
offenders+=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](simgrid|xbt)[/.]' \
               src/engine/collective_lowering.* || true)
if [ -n "$offenders" ]; then
  echo "SimGrid included outside src/platform and src/engine (or in collective_lowering):" >&2
  echo "$offenders" >&2
  exit 1
fi
