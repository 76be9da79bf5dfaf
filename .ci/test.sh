#!/usr/bin/env bash
# make test: every stage, the machine's two cores kept busy.
#   1. the unit stage, while the venvs of the later stages are built in the background, niced
#      (.ci/prefetch.sh: downloading and unpacking wheels is mostly waiting; its log is printed
#      when the unit stage ends);
#   2. then three lanes at once, each stage after the other within its lane:
#        nova lane:   nova-oracle -> twin-per-kind  (one pytest process at a time per judge, much
#                     of it waiting on nova's services)
#        cloud lane:  cloud-twin-stage  (services on 127.0.0.1 that mostly wait: on its own, at the
#                     end of the nova lane, it kept the two cores 17-45% busy for its 3.5 minutes)
#        tools lane:  sanity -> core-matrix -> lint -> docs-lint -> publish -> molecule
#      The tools lane prints as it runs; the nova and cloud lanes' output is kept in
#      tests/output/make-test-nova-lane.log and make-test-cloud-lane.log and printed when every
#      lane is done.
# A stage that fails stops its lane (the lane's later stages do not run); the other lanes run to
# their end, so one run reports them all; make test then fails naming the stage.  A failing unit
# stage stops everything.  Each stage is also a make target of its own (make <stage>).
# Usage: .ci/test.sh SUMMARY_FILE   (make test passes tests/output/make-test-summary.txt)
#   MAKE: the make to run each stage with; PREFETCH: the background builder (.ci/prefetch.sh)
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
summary=${1:?usage: test.sh SUMMARY_FILE}
make=${MAKE:-make}
mkdir -p "$(dirname "$summary")"
out=$(cd "$(dirname "$summary")" && pwd)   # the logs go beside the summary
: > "$summary"
prefetch_log=$out/make-test-prefetch.log
nova_log=$out/make-test-nova-lane.log
cloud_log=$out/make-test-cloud-lane.log
NOVA_LANE=(nova-oracle twin-per-kind)
CLOUD_LANE=(cloud-twin-stage)
TOOLS_LANE=(sanity core-matrix lint docs-lint publish molecule)
start=$(date +%s)

stage() {
  "$make" --no-print-directory STAGE_SUMMARY="$summary" "$1"
}

# lane NAME STAGE...: the stages in order, stopping at the first that fails (its name in $out/lane-NAME.failed)
lane() {
  local name=$1 s
  shift
  rm -f "$out/lane-$name.failed"
  for s in "$@"; do
    shift   # "$@" is now the lane's stages after $s (the loop's list was expanded once)
    if ! stage "$s"; then
      echo "$s" > "$out/lane-$name.failed"
      if [[ $# -gt 0 ]]; then
        echo "make test: FAILED at stage '$s'; the $name lane's later stages ($*) did not run. Re-run it alone with 'make $s'."
      else
        echo "make test: FAILED at stage '$s', the $name lane's last. Re-run it alone with 'make $s'."
      fi
      return 1
    fi
  done
}

finish() {
  echo
  echo "make test: summary (in the order the stages ended)"
  cat "$summary"
  if [[ $1 -eq 0 ]]; then
    echo "make test: all stages passed in $(( $(date +%s) - start ))s"
  else
    echo "make test: FAILED after $(( $(date +%s) - start ))s at: $2"
  fi
  exit "$1"
}

# 1. the unit stage; the later stages' venvs are built beside it (own process group, niced)
echo "==> prefetch: the later stages' venvs, built in the background (log: $prefetch_log)"
setsid nice -n 10 "${PREFETCH:-$root/.ci/prefetch.sh}" > "$prefetch_log" 2>&1 &
prefetch=$!
if ! stage unit; then
  kill -- -"$prefetch" 2>/dev/null
  wait "$prefetch" 2>/dev/null
  echo "make test: FAILED at stage 'unit'; later stages did not run. Re-run it alone with 'make unit'."
  finish 1 unit
fi
prefetch_wait=$(date +%s)
wait "$prefetch"
prefetch_rc=$?
echo "==> prefetch (waited $(( $(date +%s) - prefetch_wait ))s for it after the unit stage; exit $prefetch_rc):"
grep '^prefetch: ' "$prefetch_log"
if [[ $prefetch_rc -ne 0 ]]; then
  echo "==> prefetch: a step failed (above; full log $prefetch_log): its stage builds that venv itself"
fi

# 2. the three lanes
echo "==> the nova lane (${NOVA_LANE[*]}) and the cloud lane (${CLOUD_LANE[*]}) run beside the tools lane; their output: $nova_log, $cloud_log"
lane nova "${NOVA_LANE[@]}" > "$nova_log" 2>&1 &
nova=$!
lane cloud "${CLOUD_LANE[@]}" > "$cloud_log" 2>&1 &
cloud=$!
lane tools "${TOOLS_LANE[@]}"
tools_rc=$?
others_wait=$(date +%s)
wait "$nova"
nova_rc=$?
wait "$cloud"
cloud_rc=$?
waited=$(( $(date +%s) - others_wait ))
echo
echo "==> the nova lane's output (waited ${waited}s for the nova and cloud lanes after the tools lane):"
cat "$nova_log"
echo
echo "==> the cloud lane's output:"
cat "$cloud_log"
failed=$(cat "$out/lane-tools.failed" "$out/lane-nova.failed" "$out/lane-cloud.failed" 2>/dev/null | tr '\n' ' ')
if [[ $tools_rc -ne 0 || $nova_rc -ne 0 || $cloud_rc -ne 0 ]]; then
  finish 1 "$failed"
fi
finish 0
