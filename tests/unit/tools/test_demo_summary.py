# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The demo's summary (issue 40): the terminal printed each deferral reason twice (the play's
summary, then the demo's), and the demo and its report gave two different rerun commands (the
report's without the demo's batches, the demo's with them).  One command, the report's, with the
demo's extra vars; printed once."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shlex

import demo

REASON = ('move in flight: consumer 91715bee-8638-50be-afd7-befdf8586aa4 holds MEMORY_MB 16384 on this node; wait for '
          'it, then rerun the roll for this node')


def _summary(fleet):
    command = fleet['report_command']
    return {
        'totals': {'nodes': 3, 'statuses': {'reshaped': 1, 'deferred': 1, 'failed': 0, 'noop': 1},
                   'allocations_moved': 4, 'consumers_moved': 3, 'providers_created': 2, 'duration': 12.5},
        'deferred': [{'node': 'compute-02', 'reason': REASON}], 'failed': [], 'unreached': [],
        'next_steps': [
            'Rerun the deferred node after its reason is cleared: %s -i %s placement.upgrade.rolling_reshape '
            '--limit compute-02' % (command, fleet['inventory']),
            'To undo this run on the node it reshaped (only if needed), roll it back: %s -i %s '
            'placement.upgrade.rollback -e rollback_nodes=compute-01' % (command, fleet['inventory'])],
    }


def test_the_reports_commands_carry_the_demos_batches(tmp_path):
    out = str(tmp_path / 'demo')
    fleet, extra_path, _env = demo.prepare(out, nodes=2, hooks=False)
    words = shlex.split(fleet['report_command'])
    assert words == [os.path.join(out, 'ansible-playbook'), '-e', '@' + extra_path], words
    # the roll the demo runs has the same extra vars
    assert demo.roll_words(fleet)[-2:] == ['-e', '@' + extra_path]


def test_reasons_and_commands_are_printed_once(tmp_path, capsys):
    out = str(tmp_path / 'demo')
    fleet, _extra, _env = demo.prepare(out, nodes=2, hooks=False)
    summary = _summary(fleet)
    # ansible-playbook's output shown: its play summary says the reasons and the next steps
    demo.print_summary(fleet, summary, out, 20.0, play_shown=True)
    shown = capsys.readouterr().out
    assert 'deferred: compute-02' in shown
    assert '91715bee' not in shown and 'ansible-playbook' not in shown, shown
    assert 'are in the play summary above' in shown
    # --quiet: printed here, the commands exactly as the report has them
    demo.print_summary(fleet, summary, out, 20.0, play_shown=False)
    quiet = capsys.readouterr().out
    assert ' '.join(quiet.split()).count('91715bee-8638-50be-afd7-befdf8586aa4') == 1
    commands = [line.strip() for line in quiet.splitlines() if 'ansible-playbook -e ' in line]
    assert commands == [step.split(': ', 1)[1] for step in summary['next_steps']], quiet
