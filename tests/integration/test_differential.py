# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded store answers exactly like the real Placement, scenario by scenario.

Every scenario of :mod:`differential.scenarios` runs once on the real service
(session fixture, 127.0.0.1) and once on a fresh embedded database; the recorded
outcomes (every step's result or ``[status, code, ErrorType]``, then the full final
state of every provider and consumer involved) must be identical.  A difference is
fixed in the embedded store, never by loosening the comparison.

The real service runs three ways (the test id's first part):
``sqlite``: the session's ``placement_server`` (SQLite, one threaded wsgiref process);
``mariadb``: ``placement_mariadb`` (a private MariaDB 10.11, gunicorn with 4 workers);
``postgresql``: ``placement_postgresql`` (a private PostgreSQL, gunicorn with 4 workers).
So a difference that shows on MariaDB or PostgreSQL only is Placement answering
differently on that database than on SQLite.  ``-m 'not mariadb and not postgresql'``
(or ``-k sqlite``) runs the SQLite case alone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from differential import harness
from differential.scenarios import SCENARIOS, ids

pytestmark = pytest.mark.real

#: The databases the real Placement runs on (the first part of each test id).
DATABASES = [
    pytest.param('sqlite', id='sqlite'),
    pytest.param('mariadb', id='mariadb', marks=pytest.mark.mariadb),
    pytest.param('postgresql', id='postgresql', marks=pytest.mark.postgresql),
]


@pytest.fixture
def real_backend(request, database):
    """A RestBackend (roles admin,service) on the real Placement running on ``database``."""
    if database == 'sqlite':
        return request.getfixturevalue('rest_backend')
    server = request.getfixturevalue('placement_' + database)
    return request.getfixturevalue('make_placement_backend')(server)


def test_enough_scenarios():
    assert len(SCENARIOS) >= 25
    assert len(set(ids())) == len(SCENARIOS)


@pytest.mark.parametrize('scenario', SCENARIOS, ids=ids())
@pytest.mark.parametrize('database', DATABASES)
def test_scenario_matches_real_placement(database, scenario, real_backend, embedded_backend):
    real = harness.run(scenario, real_backend)
    embedded = harness.run(scenario, embedded_backend)
    # A scenario that provoked nothing would prove nothing.
    assert real['steps'], 'scenario recorded no step'
    difference = harness.compare(real, embedded, real_label='real/%s' % database)
    assert difference is None, difference
