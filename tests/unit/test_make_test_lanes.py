# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make test's order (.ci/test.sh), run with a stand-in make that records each stage it is asked for.

The unit stage runs first, alone but for the background venv builder; then the nova lane, the cloud
lane and the tools lane run at once, each in its own order; a failing stage stops its lane only, a
failing unit stage stops everything (and the builder); the summary names every stage that ran.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOVA = ['nova-oracle', 'twin-per-kind']
CLOUD = ['cloud-twin-stage']
TOOLS = ['sanity', 'core-matrix', 'lint', 'docs-lint', 'publish', 'molecule']

# the stand-in make: "make --no-print-directory STAGE_SUMMARY=FILE STAGE"; logs "start STAGE" and
# "end STAGE" with a timestamp, appends the stage's summary line, fails the stages named in $FAIL
FAKE_MAKE = r'''#!/usr/bin/env bash
summary=${2#STAGE_SUMMARY=}
stage=$3
echo "start $stage $(date +%s.%N)" >> "$CALLS"
sleep "${PAUSE:-0.1}"
echo "end $stage $(date +%s.%N)" >> "$CALLS"
if [[ " $FAIL " == *" $stage "* ]]; then
  echo "stage $stage FAILED" >> "$summary"; exit 2
fi
echo "stage $stage PASSED" >> "$summary"
'''
FAKE_PREFETCH = r'''#!/usr/bin/env bash
echo "prefetch-start $(date +%s.%N)" >> "$CALLS"
echo "prefetch: .venv-nova"
sleep "${PREFETCH_PAUSE:-0.1}"
echo "prefetch: .venv-nova done in 0s"
echo "prefetch-end $(date +%s.%N)" >> "$CALLS"
exit "${PREFETCH_RC:-0}"
'''


def _run(tmp_path, fail='', prefetch_rc=0, prefetch_pause='0.1'):
    tmp_path = tmp_path / ('run-%d' % len(os.listdir(str(tmp_path))))
    tmp_path.mkdir()
    make = tmp_path / 'make'
    make.write_text(FAKE_MAKE)
    prefetch = tmp_path / 'prefetch'
    prefetch.write_text(FAKE_PREFETCH)
    os.chmod(str(make), 0o755)
    os.chmod(str(prefetch), 0o755)
    calls = tmp_path / 'calls'
    env = dict(os.environ, MAKE=str(make), PREFETCH=str(prefetch), CALLS=str(calls), FAIL=fail,
               PREFETCH_RC=str(prefetch_rc), PREFETCH_PAUSE=prefetch_pause)
    summary = tmp_path / 'output' / 'summary.txt'
    proc = subprocess.run([os.path.join(REPO, '.ci', 'test.sh'), str(summary)], env=env, cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=120, check=False)
    events = {}
    for line in calls.read_text().splitlines():
        what, *rest = line.split()
        events.setdefault(what, {})[rest[0] if len(rest) == 2 else ''] = float(rest[-1])
    return proc.returncode, proc.stdout, events


def _ran(events):
    return sorted(events.get('start', {}), key=lambda s: events['start'][s])


def test_unit_first_then_the_three_lanes_at_once_each_in_its_order(tmp_path):
    rc, out, events = _run(tmp_path)
    assert rc == 0, out
    start, end = events['start'], events['end']
    assert set(start) == set(['unit'] + NOVA + CLOUD + TOOLS)
    # the builder runs beside the unit stage, and the lanes start after both
    assert events['prefetch-start'][''] < end['unit']
    first_of_lanes = min(start[s] for s in NOVA + CLOUD + TOOLS)
    assert first_of_lanes >= end['unit'] and first_of_lanes >= events['prefetch-end']['']
    # each lane in its order, one stage after the other
    for order in (NOVA, TOOLS):
        for before, after in zip(order, order[1:]):
            assert end[before] <= start[after], (before, after)
    # the lanes overlap: the nova and cloud lanes start before the tools lane's first stage ends
    for first in ('nova-oracle', 'cloud-twin-stage'):
        assert start[first] < end['sanity'] and start['sanity'] < end[first], first
    assert start['cloud-twin-stage'] < end['nova-oracle'] and start['nova-oracle'] < end['cloud-twin-stage']
    # every lane's output is printed
    assert "==> the nova lane's output" in out and "==> the cloud lane's output:" in out
    assert re.search(r'^make test: all stages passed in \d+s$', out, flags=re.M), out
    assert out.count('PASSED') == 10, out
    assert 'prefetch: .venv-nova done in 0s' in out


def test_a_failing_stage_stops_its_lane_and_the_other_lanes_run_to_their_end(tmp_path):
    rc, out, events = _run(tmp_path, fail='nova-oracle')
    assert rc == 1, out
    ran = _ran(events)
    assert 'twin-per-kind' not in ran
    assert set(TOOLS + CLOUD) <= set(ran)
    assert "make test: FAILED at stage 'nova-oracle'; the nova lane's later stages (twin-per-kind) did not run." in out
    assert re.search(r'^make test: FAILED after \d+s at: nova-oracle $', out, flags=re.M), out
    rc, out, events = _run(tmp_path, fail='cloud-twin-stage')
    assert rc == 1, out
    assert set(NOVA + TOOLS) <= set(_ran(events))
    assert "make test: FAILED at stage 'cloud-twin-stage', the cloud lane's last." in out
    assert re.search(r'^make test: FAILED after \d+s at: cloud-twin-stage $', out, flags=re.M), out
    rc, out, events = _run(tmp_path, fail='core-matrix publish')
    assert rc == 1, out
    ran = _ran(events)
    assert 'core-matrix' in ran and 'lint' not in ran and 'publish' not in ran
    assert set(NOVA + CLOUD) <= set(ran)
    assert "the tools lane's later stages (lint docs-lint publish molecule) did not run." in out
    assert re.search(r'^make test: FAILED after \d+s at: core-matrix $', out, flags=re.M), out


def test_a_failing_unit_stage_stops_everything_and_the_builder(tmp_path):
    rc, out, events = _run(tmp_path, fail='unit', prefetch_pause='30')
    assert rc == 1, out
    assert _ran(events) == ['unit']
    assert 'prefetch-end' not in events, 'the builder was left running'
    assert "make test: FAILED at stage 'unit'; later stages did not run." in out


def test_a_failed_prefetch_is_said_and_the_stages_still_run(tmp_path):
    rc, out, events = _run(tmp_path, prefetch_rc=1)
    assert rc == 0, out
    assert 'prefetch (waited' in out and 'exit 1' in out
    assert 'a step failed (above; full log' in out
    assert len(_ran(events)) == 10
