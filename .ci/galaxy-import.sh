#!/usr/bin/env bash
# Galaxy's own import checks (issue 43): build the collection tarball and run galaxy-importer on
# it as Galaxy and Automation Hub do on upload, offline, with ansible-lint on (ansible-test off: it
# needs containers). Fails on any ERROR or WARNING line, or without the importer's final
# "completed successfully". Venv .venv-importer (.ci/requirements-importer.txt, built on first run).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
IMP=${IMP:-$root/.venv-importer}
"$root/.ci/tool-venv.sh" "$IMP" "$root/.ci/requirements-importer.txt"

work=$(mktemp -d "${TMPDIR:-/tmp}/placement-upgrade-import.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tmp" "$work/dist"
cat > "$work/galaxy-importer.cfg" <<CFG
[galaxy-importer]
LOG_LEVEL_MAIN = INFO
RUN_ANSIBLE_TEST = False
RUN_ANSIBLE_LINT = True
OFFLINE_ANSIBLE_LINT = True
RUN_FLAKE8 = False
ANSIBLE_LOCAL_TMP = $work/tmp/ansible
TMP_ROOT_DIR = $work/tmp
CFG
cd "$root"
"$BIN/ansible-galaxy" collection build --force --output-path "$work/dist" . >/dev/null
tarball=$(ls "$work"/dist/placement-upgrade-*.tar.gz)
log=$root/tests/output/galaxy-import.log
mkdir -p "$(dirname "$log")"
# HOME too, so the importer's ansible-lint and ansible-galaxy write nothing under the user's home
status=0
(cd "$work" && HOME=$work/tmp GALAXY_IMPORTER_CONFIG=$work/galaxy-importer.cfg PATH=$IMP/bin:$PATH \
  ANSIBLE_COLLECTIONS_PATH='' "$IMP/bin/python" -m galaxy_importer.main "$tarball") >"$log" 2>&1 || status=$?
problems=$(grep -E '^(ERROR|WARNING)|(^| )(ERROR|WARNING):' "$log" || true)
if [[ $status -ne 0 || -n $problems ]] || ! grep -q 'Importer processing completed successfully' "$log"; then
  grep -vE '^(INFO|DEBUG)' "$log" | tail -40 >&2
  echo "galaxy-import: $(basename "$tarball") is not imported cleanly (exit $status;" \
    "$(echo -n "$problems" | grep -c . || true) error/warning line(s); full log: tests/output/galaxy-import.log)" >&2
  exit 1
fi
echo "galaxy-import: $(basename "$tarball") imported by galaxy-importer $("$IMP/bin/pip" show galaxy-importer 2>/dev/null | sed -n 's/^Version: //p') with ansible-lint: no error, no warning"
