# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/reliability: print the figures the suites recorded at the end of the pytest run.

A suite records its table with ``record_property('reliability_figures', text)``; the
property travels with the test report (also from xdist workers), and the summary below
prints every one of them, passed or failed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

FIGURES_KEY = 'reliability_figures'


def pytest_terminal_summary(terminalreporter):
    tables = []
    for outcome in ('passed', 'failed'):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, 'when', None) != 'call':
                continue
            for key, value in getattr(report, 'user_properties', ()):
                if key == FIGURES_KEY:
                    tables.append(value)
    if tables:
        terminalreporter.section('reliability figures (issue 12, quick run; full run: make reliability)')
        for table in tables:
            for line in table.splitlines():
                terminalreporter.write_line(line)
