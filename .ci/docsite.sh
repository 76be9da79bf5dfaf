#!/usr/bin/env bash
# The collection's docsite (issue 43): every module, plugin and role entry point documented by
# antsibull-docs, the guides of docs/ as extra docs (docs/docsite/extra-docs.yml, links.yml), built
# to HTML by Sphinx with the Ansible theme, offline, into build/docsite/html/ (index.html).
# First checks that docs/docsite/rst/ matches the Markdown guides (.ci/docsite-guides.py --check).
# antsibull-docs runs from the project venv (it reads the plugins' docs with ansible-core there);
# Sphinx, its Ansible theme and pandoc come from .venv-publish (.ci/requirements-publish.txt).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
PUB=${PUB:-$root/.venv-publish}
"$root/.ci/tool-venv.sh" "$PUB" "$root/.ci/requirements-publish.txt"
"$PUB/bin/python" "$root/.ci/docsite-guides.py" --check

out=$root/build/docsite
rm -rf "$out"
mkdir -p "$out"
chmod 700 "$out"
src=$out/src
mkdir -m 700 "$src"
export ANSIBLE_COLLECTIONS_PATH=$root/.venv/collections
# antsibull-docs calls ansible-doc and ansible: the project venv's
export PATH=$BIN:$PATH
common=(--use-current --squash-hierarchy --fail-on-error --no-add-antsibull-docs-version)
"$BIN/antsibull-docs" sphinx-init "${common[@]}" --dest-dir "$src" \
  --project placement.upgrade --title 'placement.upgrade documentation' \
  --html-short-title placement.upgrade placement.upgrade >/dev/null
# offline: Ansible's own documentation linked without fetching its intersphinx inventory
cat "$root/.ci/docsite_conf_offline.py" >> "$src/conf.py"
chmod 700 "$src/rst"
"$BIN/antsibull-docs" --config-file "$src/antsibull-docs.cfg" collection "${common[@]}" \
  --cleanup everything --dest-dir "$src/rst" placement.upgrade >"$out/antsibull-docs.log" 2>&1 \
  || { cat "$out/antsibull-docs.log" >&2; echo "docsite: antsibull-docs failed" >&2; exit 1; }
if ! "$PUB/bin/sphinx-build" -q -b html -c "$src" -W --keep-going "$src/rst" "$out/html" >"$out/sphinx.log" 2>&1; then
  cat "$out/sphinx.log" >&2
  echo "docsite: sphinx-build failed or warned (log: build/docsite/sphinx.log)" >&2
  exit 1
fi
pages=$(find "$out/html" -name '*.html' | wc -l)
echo "docsite: $pages page(s) in build/docsite/html (open build/docsite/html/index.html)"
