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
# The artifact carries what a user runs and nothing of the development harness (issue 43):
# exactly these top-level entries, tests/ holding only tests/sanity, extensions/ only extensions/awx.
expected_top="CHANGELOG.rst
COPYING
FILES.json
LICENSES
MANIFEST.json
README.md
bindep.txt
changelogs
docs
extensions
meta
playbooks
plugins
requirements.txt
roles
templates
tests"
tar -tzf "$tarball" | sed 's#^\./##' > "$work/entries.txt"
top=$(sed 's#/.*##' "$work/entries.txt" | grep -v '^$' | sort -u)
if [[ $top != "$expected_top" ]]; then
  echo "build-check: the tarball's top-level entries are not the expected ones (< expected, > built);" \
    "extend build_ignore in galaxy.yml, or this list if the new entry is for users:" >&2
  diff <(echo "$expected_top") <(echo "$top") >&2 || true
  exit 1
fi
for dir in tests:sanity extensions:awx; do
  sub=$(awk -F/ -v d="${dir%%:*}" '$1 == d && $2 != "" {print $2}' "$work/entries.txt" | sort -u)
  if [[ $sub != "${dir##*:}" ]]; then
    echo "build-check: ${dir%%:*}/ in the tarball holds: ${sub//$'\n'/ }; expected only ${dir##*:}" >&2
    exit 1
  fi
done
for dev in benchmarks tools Makefile requirements-dev.txt pytest.ini .ansible-lint galaxy.yml \
    collections extensions/molecule tests/unit tests/integration tests/conftest.py; do
  if grep -qE "^${dev//./\\.}(/|$)" "$work/entries.txt"; then
    echo "build-check: development file $dev is in $tarball (extend build_ignore in galaxy.yml)" >&2
    exit 1
  fi
done
for need in plugins/modules/reshape.py roles/rolling_reshape/README.md roles/preflight/README.md \
    playbooks/rolling_reshape.yml meta/runtime.yml changelogs/changelog.yaml LICENSES/GPL-3.0-or-later.txt \
    tests/sanity/README.md; do
  grep -qx "$need" "$work/entries.txt" \
    || { echo "build-check: $need is missing from $tarball" >&2; exit 1; }
done
leaked=$(tar -tzf "$tarball" | grep -E '(^|/)(\.venv[^/]*|\.ci|\.git|\.hypothesis|\.pytest_cache|tests/output|__pycache__)(/|$)' || true)
if [[ -n $leaked ]]; then
  echo "build-check: development files leaked into $tarball (extend build_ignore in galaxy.yml):" >&2
  echo "$leaked" | head -20 >&2
  exit 1
fi
echo "build-check: $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) entries, $(echo "$top" | wc -l) top-level (the expected list), installed offline OK"

# What an execution environment built with this collection would install.
"$BIN/ansible-builder" introspect "$work/installed" > "$work/introspect.txt"
if ! grep -q 'openstacksdk' "$work/introspect.txt"; then
  echo "build-check: ansible-builder introspect did not pick up requirements.txt:" >&2
  cat "$work/introspect.txt" >&2
  exit 1
fi
echo "build-check: ansible-builder introspect sees the collection's python/system dependencies"
