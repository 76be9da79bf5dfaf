# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark only (benchmarks/bench_fleet.py --profile): wall time per task name, summed over the run.

Written to the file named by BENCH_TASK_TIMES (JSON: [[seconds, runs, task name], ...]).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'task_times'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._seconds = collections.defaultdict(float)
        self._runs = collections.Counter()
        self._current = None
        self._started = None

    def _close(self):
        if self._current is not None:
            self._seconds[self._current] += time.time() - self._started
            self._runs[self._current] += 1
        self._current = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        self._current = task.get_name()
        self._started = time.time()

    def v2_playbook_on_stats(self, stats):
        self._close()
        rows = sorted(([round(s, 3), self._runs[name], name] for name, s in self._seconds.items()), reverse=True)
        path = os.environ.get('BENCH_TASK_TIMES')
        if path:
            with open(path, 'w') as handle:
                json.dump(rows, handle, indent=1)
