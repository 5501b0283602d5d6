#!/usr/bin/env bash
# Installs trident into a temporary prefix (cmake --install) and runs it from another
# directory, with library names only: the installed library must be the one found.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trident_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

fail() { echo "install_test: $*" >&2; exit 1; }
for f in bin/trident share/trident/configs/clusters/dgx-h100.yaml \
         share/trident/scenarios/llama3-70b-dgx-h100.yaml share/trident/scripts/slurm_sweep.sh \
         share/doc/trident/README.md share/doc/trident/docs/schema.md \
         share/doc/trident/docs/usage.md share/doc/trident/docs/img/microbatch-sweep.png; do
  [ -e "$prefix/$f" ] || fail "missing $prefix/$f"
done
[ -x "$prefix/share/trident/scripts/slurm_sweep.sh" ] || fail "scripts are not executable"
# The installed README's links to docs/ resolve there too.
"$(dirname "$0")/docs_links_test.sh" "$prefix/share/doc/trident" >/dev/null ||
  fail "links of the installed README.md and docs/"

work=$tmp/elsewhere
mkdir -p "$work"
cd "$work"
# The installed library comes before the source tree's.
"$prefix/bin/trident" list clusters | grep -q "dgx-h100 .*$prefix/share/trident/configs/clusters/dgx-h100.yaml" ||
  fail "trident list does not show the installed library"
"$prefix/bin/trident" simulate llama3-70b-dgx-h100 --format json > by_name.json
grep -q '"cluster": "dgx-h100"' by_name.json || fail "simulate by scenario name"
cat > mine.yaml <<'YAML'
cluster: hgx-b200
model: llama3-8b
plan:
  tensor_parallel: 8
  pipeline_parallel: 1
  data_parallel: 2
  micro_batch_size: 1
  global_batch_size: 16
YAML
"$prefix/bin/trident" simulate mine.yaml --set cluster.nodes=2 --format json > mine.json
grep -q '"cluster": "hgx-b200"' mine.json || fail "simulate a scenario naming its cluster"
# The installed program searches its prefix's library (and TRIDENT_PATH), never the source
# tree it was built from, which may change or go away: the directories an unknown name's
# message lists, and `trident --version`.
src=$(cd "$(dirname "$0")/.." && pwd -P)
set +e
missing=$(env -u TRIDENT_PATH "$prefix/bin/trident" simulate no-such-scenario-anywhere 2>&1)
code=$?
set -e
[ "$code" = 2 ] || fail "an unknown name exits $code, not 2"
echo "$missing" | grep -q "searched .*$prefix/share/trident" || fail "no prefix in: $missing"
case "$missing" in *"$src"*) fail "the installed trident searches the source tree: $missing" ;; esac
"$prefix/bin/trident" --version | grep -q '^trident [0-9]' || fail "trident --version"
# A shipped cluster copied here keeps working (its gpu: is a name).
cp "$prefix/share/trident/configs/clusters/dgx-h100.yaml" copied.yaml
"$prefix/bin/trident" validate copied.yaml >/dev/null || fail "a copied cluster file"
# The Python package, when it was built: its sweep/compare use the installed binary.
pkg=$prefix/lib/python3/dist-packages
if [ -d "$pkg/trident" ]; then
  PYTHONPATH=$pkg /usr/bin/python3 - "$prefix" <<'PY' || fail "the installed Python package"
import sys, trident
assert trident.binary() == sys.argv[1] + "/bin/trident", trident.binary()
assert trident.simulate("tiny")["cluster"] == "tiny-2node"
assert trident.validate("dgx-h100") == "cluster"
PY
fi
echo "install_test: ok ($prefix, run from $work)"
