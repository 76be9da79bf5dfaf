#!/usr/bin/env bash
# Build the collection tarball and install it offline, both into temp dirs, then
# check what a consumer gets: MANIFEST.json, the modules, no development files,
# and the execution-environment dependencies ansible-builder reads from it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/placement-upgrade-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$root"

"$BIN/ansible-galaxy" collection build --force --output-path "$work/dist" .
tarball=$(ls "$work"/dist/placement-upgrade-*.tar.gz)
ANSIBLE_COLLECTIONS_PATH="$work/installed" "$BIN/ansible-galaxy" collection install --offline --force -p "$work/installed" "$tarball"

installed="$work/installed/ansible_collections/placement/upgrade"
for f in MANIFEST.json FILES.json meta/runtime.yml README.md; do
  [[ -f "$installed/$f" ]] || { echo "build-check: $f missing from the installed collection" >&2; exit 1; }
done
leaked=$(tar -tzf "$tarball" | grep -E '(^|/)(\.venv[^/]*|\.ci|\.git|\.hypothesis|\.pytest_cache|tests/output|__pycache__)(/|$)' || true)
if [[ -n $leaked ]]; then
  echo "build-check: development files leaked into $tarball (extend build_ignore in galaxy.yml):" >&2
  echo "$leaked" | head -20 >&2
  exit 1
fi
echo "build-check: $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) entries, installed offline OK"

# What an execution environment built with this collection would install.
"$BIN/ansible-builder" introspect "$work/installed" > "$work/introspect.txt"
if ! grep -q 'openstacksdk' "$work/introspect.txt"; then
  echo "build-check: ansible-builder introspect did not pick up requirements.txt:" >&2
  cat "$work/introspect.txt" >&2
  exit 1
fi
echo "build-check: ansible-builder introspect sees the collection's python/system dependencies"
