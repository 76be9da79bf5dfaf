# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pytest fixtures: the real Placement server and the two backends (tools/, tests/ and
tests/unit/ are on sys.path: simfleet, fakehost, the servers, test_reshaper_support).

Fixtures
    ``placement_server`` (session): a :class:`placement_server.PlacementServer` on
        127.0.0.1 (``.url``, ``.stop()``, ``.log_path``, ``.module_auth()``,
        ``.adapter(token=, roles=)``), started once per test session (once per xdist
        worker) with a fresh SQLite database.  The database is SHARED by every test of
        the session: create providers with unique names/uuids (``unique_name``) and never
        assume an empty placement.  ``--placement-url URL`` reuses a running server.
    ``rest_backend`` (function): a RestBackend on that server with roles admin,service.
    ``make_rest_backend`` (function): ``make_rest_backend(token='operator:proj',
        roles='member')`` builds more (e.g. without the service role, for the 403).
    ``embedded_backend`` (function): an EmbeddedBackend on ``tmp_path/'placement.db'``.
    ``unique_name`` (function): ``unique_name('cn')`` -> ``'cn-<8 hex>'``.
    ``placement_mariadb`` / ``placement_postgresql`` (session, markers ``mariadb`` /
        ``postgresql``): production-shaped Placement, ``PlacementServer.production(db=...)``:
        a private MariaDB 10.11 / PostgreSQL (tests/db_servers.py, ``.db_server``) behind
        gunicorn with 4 workers, oslo.db's deadlock retries logged (``.deadlock_counts()``);
        started on first use, once per xdist worker, stopped with the session.  Missing
        mariadb-server/postgresql is an error that says ``make deps`` installs it, not a skip.
    ``make_placement_backend`` (function): ``make_placement_backend(server, token=, roles=)``,
        a RestBackend on any of those servers, closed after the test.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
for _path in (os.path.join(_ROOT, 'tools'), _HERE, os.path.join(_HERE, 'unit')):
    if os.path.isdir(_path) and _path not in sys.path:
        sys.path.insert(0, _path)

from placement_server import PlacementServer  # noqa: E402


@pytest.fixture(autouse=True)
def _no_tokens_shared_between_tests(monkeypatch):
    """The run's shared Keystone tokens (backends/tokens.py) are installed by preload.warm(), which
    the batches filter calls: a test that calls it would install them in this test process, and a
    token (with its catalog) of one test would be handed to the next.  Off in every test; the tests
    of the sharing install their own."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import tokens
    monkeypatch.setattr(tokens, '_SHARED', [None])


def pytest_addoption(parser):
    parser.addoption('--placement-url', action='store', default=None,
                     help='reuse a running Placement (noauth2, reshape policy granting admin) '
                          'instead of starting one on 127.0.0.1')


@pytest.fixture(scope='session')
def placement_sqlite(request):
    """The session's real Placement on SQLite (or the one given by --placement-url).

    A test module that runs its tests on several databases overrides ``placement_server`` with a
    parametrized fixture requesting THIS one (tests/db_matrix.py): requesting the session's
    ``placement_server`` by its own name from a parametrized override ties the session server to the
    parameter, and pytest then stops and starts it again at every change of parameter (once per test).
    """
    url = request.config.getoption('--placement-url')
    if url:
        server = PlacementServer.existing(url)
    else:
        server = PlacementServer()
        server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope='session')
def placement_server(placement_sqlite):
    return placement_sqlite


def _production_placement(db):
    server = PlacementServer.production(db=db, workers=4)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope='session')
def placement_mariadb():
    """Placement on a private MariaDB behind gunicorn (4 workers); see the module doc."""
    yield from _production_placement('mariadb')


@pytest.fixture(scope='session')
def placement_postgresql():
    """Placement on a private PostgreSQL behind gunicorn (4 workers); see the module doc."""
    yield from _production_placement('postgresql')


@pytest.fixture
def make_placement_backend():
    """Factory: ``make_placement_backend(server, token='admin', roles=('admin', 'service'))``."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

    made = []

    def make(server, token='admin', roles=('admin', 'service')):
        backend = RestBackend(server.adapter(token=token, roles=roles))
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()


@pytest.fixture
def make_rest_backend(placement_server):
    """Factory: RestBackend on the session server with a given noauth2 token and roles."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

    made = []

    def make(token='admin', roles=('admin', 'service')):
        backend = RestBackend(placement_server.adapter(token=token, roles=roles))
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()


@pytest.fixture
def rest_backend(make_rest_backend):
    """RestBackend with admin + service roles (so POST /reshaper is allowed by any policy)."""
    return make_rest_backend()


@pytest.fixture
def embedded_backend(tmp_path):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

    backend = EmbeddedBackend(str(tmp_path / 'placement.db'))
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture
def unique_name():
    def make(prefix='rp'):
        return '%s-%s' % (prefix, uuid.uuid4().hex[:8])
    return make
