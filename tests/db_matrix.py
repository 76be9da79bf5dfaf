# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The database matrix of the real-Placement tests (issue 28).

A test module runs its tests on Placement on SQLite (the fast lane) AND on MariaDB behind
gunicorn with 4 worker processes (``make test``; marked ``slow`` and ``mariadb``) by overriding
the session fixture ``placement_server`` (tests/conftest.py) with::

    from db_matrix import DB_MATRIX, on_db

    @pytest.fixture(params=DB_MATRIX)
    def placement_server(request, placement_sqlite):
        return on_db(request, placement_sqlite)

Every fixture built on ``placement_server`` (``rest_backend``, ``make_rest_backend``) follows.
The override requests ``placement_sqlite``, the session's SQLite server under its own name: had it
requested ``placement_server``, pytest would tie the session server to the override's parameter and
stop and start it at every change of parameter, once per test (2.5-3.5 s each).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

DB_MATRIX = ['sqlite', pytest.param('mariadb', marks=[pytest.mark.mariadb, pytest.mark.slow])]


def on_db(request, sqlite_server):
    """The session's Placement for ``request.param``: the SQLite one given, or ``placement_<db>``."""
    if request.param == 'sqlite':
        return sqlite_server
    return request.getfixturevalue('placement_%s' % request.param)
