# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded store answers exactly like the real Placement, scenario by scenario.

Every scenario of :mod:`differential.scenarios` runs once on the real service
(session fixture, 127.0.0.1) and once on a fresh embedded database; the recorded
outcomes (every step's result or ``[status, code, ErrorType]``, then the full final
state of every provider and consumer involved) must be identical.  A difference is
fixed in the embedded store, never by loosening the comparison.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from differential import harness
from differential.scenarios import SCENARIOS, ids

pytestmark = pytest.mark.real


def test_enough_scenarios():
    assert len(SCENARIOS) >= 25
    assert len(set(ids())) == len(SCENARIOS)


@pytest.mark.parametrize('scenario', SCENARIOS, ids=ids())
def test_scenario_matches_real_placement(scenario, rest_backend, embedded_backend):
    real = harness.run(scenario, rest_backend)
    embedded = harness.run(scenario, embedded_backend)
    # A scenario that provoked nothing would prove nothing.
    assert real['steps'], 'scenario recorded no step'
    difference = harness.compare(real, embedded)
    assert difference is None, difference
