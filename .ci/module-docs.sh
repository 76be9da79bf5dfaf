#!/usr/bin/env bash
# Regenerate docs/modules/ (one page per module, callback, filter, inventory and lookup plugin) from the plugins' own
# DOCUMENTATION/EXAMPLES/RETURN with antsibull-docs. With --check, generate into a temp dir and
# fail if docs/modules/ differs (a module changed without its page being regenerated).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$top/.venv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$top/.venv/collections"
dest=docs/modules
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  dest=$(mktemp -d)
  trap 'rm -rf "$dest"' EXIT
fi
gen() {  # type name
  antsibull-docs plugin --dest-dir "$dest" --plugin-type "$1" --output-format simplified-rst \
    --fail-on-error --no-add-antsibull-docs-version "placement.upgrade.$2" >/dev/null
}
for f in plugins/modules/*.py; do
  gen module "$(basename "$f" .py)"
done
for f in plugins/callback/*.py; do
  gen callback "$(basename "$f" .py)"
done
for f in plugins/filter/*.py; do
  gen filter "$(basename "$f" .py)"
done
for f in plugins/inventory/*.py; do
  gen inventory "$(basename "$f" .py)"
done
for f in plugins/lookup/*.py; do
  gen lookup "$(basename "$f" .py)"
done
if [ "$check" = 1 ]; then
  if ! diff -r -q -x README.md "$dest" docs/modules; then
    echo "docs/modules/ is stale: run 'make docs' and commit the result" >&2
    exit 1
  fi
  echo "docs/modules/ is up to date"
fi
