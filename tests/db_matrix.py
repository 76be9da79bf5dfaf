# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The database matrix of the real-Placement tests (issue 28).

A test module runs its tests on Placement on SQLite (the fast lane) AND on MariaDB behind
gunicorn with 4 worker processes (``make test``; marked ``slow`` and ``mariadb``) by overriding
the session fixture ``placement_server`` (tests/conftest.py) with::

    from db_matrix import DB_MATRIX, on_db

    @pytest.fixture(params=DB_MATRIX)
    def placement_server(request, placement_server):
        return on_db(request, placement_server)

Every fixture built on ``placement_server`` (``rest_backend``, ``make_rest_backend``) follows.
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
