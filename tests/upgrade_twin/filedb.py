# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova's functional harness on FILE databases (the upgrade twin, issue 29).

Imported by the old release's writer (nova 31.x / 33.x, in .venv-nova31 / .venv-nova33) and by
nova 34's judge (.venv-nova): the same code in every release, only nova's fixtures it replaces.

nova's harness keeps its databases in memory and creates their schema itself.  Here every
database is a SQLite FILE whose schema the release's own CLI created or upgraded
(``nova-manage api_db sync``, ``cell_v2 map_cell0``, ``cell_v2 create_cell``, ``db sync``,
``placement-manage db sync``), and the cells are the ones the API database maps
(``cell_mappings.database_connection`` is the cell file's URL), so:

* ``Database('api')`` plugs an engine facade on the API file into nova's API context manager;
* ``CellDatabases`` gets one context manager per mapped cell, keyed by the mapping's URL (nova's
  ``target_cell`` finds it under that key), and applies no schema;
* ``_setup_cells`` (a method of the test case, see :class:`FileDatabasesMixin`) reads the
  mappings instead of creating them;
* Placement's ``Database`` fixture points Placement's engine facade at the Placement file
  (Placement's own ``update_database`` still syncs its traits and classes at app load, as the
  real service does at start-up).
"""

import fixtures
from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures as db_fixtures

from nova.db.api import api as api_db_api
from nova.db.main import api as main_db_api
from nova import context as nova_context
from nova import objects
from nova.tests import fixtures as nova_fixtures

REAL_CREATE_CONTEXT_MANAGER = main_db_api.create_context_manager


def sqlite_url(path):
    return 'sqlite:///' + path


def database_fixture(api_url):
    """nova's ``Database`` fixture class, for the API database only, on ``api_url``."""

    class FileDatabase(fixtures.Fixture):
        def __init__(self, database='main', version=None, connection=None):
            super().__init__()
            if database != 'api':
                raise AssertionError('the upgrade twin maps cells from the API database, not %r' % database)
            self.version = version
            self.connection = connection

        def setUp(self):
            super().setUp()
            facade = enginefacade.transaction_context()
            facade.configure(connection=api_url)
            self.useFixture(db_fixtures.ReplaceEngineFacadeFixture(api_db_api.context_manager, facade))
            self.get_engine = api_db_api.get_engine
            self.addCleanup(lambda: facade.writer.get_engine().dispose())

    return FileDatabase


class FileCellDatabases(nova_fixtures.CellDatabases):
    """One context manager per cell, on the URL its mapping names; no schema applied."""

    def add_cell_database(self, connection_str, default=False):
        ctxt_mgr = REAL_CREATE_CONTEXT_MANAGER(connection=connection_str)
        self._ctxt_mgrs[connection_str] = ctxt_mgr
        self._last_ctxt_mgr = ctxt_mgr
        if self._default_ctxt_mgr is None or default:
            self._default_ctxt_mgr = ctxt_mgr


def placement_database_fixture(placement_url):
    """Placement's ``placement.tests.fixtures.Database`` class, on ``placement_url``."""
    from placement import db_api as placement_db
    from placement.objects import resource_class as placement_rc
    from placement.objects import trait as placement_trait

    class FilePlacementDatabase(fixtures.Fixture):
        def __init__(self, conf_fixture, set_config=False):
            super().__init__()
            self.conf_fixture = conf_fixture
            self.set_config = set_config

        def setUp(self):
            super().setUp()
            try:
                self.conf_fixture.register_opt(cfg.StrOpt('connection'), group='placement_database')
            except cfg.DuplicateOptError:
                pass
            self.conf_fixture.config(connection=placement_url, group='placement_database')
            facade = enginefacade.transaction_context()
            facade.configure(connection=placement_url)
            self.useFixture(db_fixtures.ReplaceEngineFacadeFixture(placement_db.placement_context_manager, facade))
            placement_trait._TRAITS_SYNCED = False
            placement_rc._RESOURCE_CLASSES_SYNCED = False
            self.addCleanup(lambda: facade.writer.get_engine().dispose())

    return FilePlacementDatabase


class FileDatabasesMixin(object):
    """Put before nova's test base class; set ``db_urls`` ({'api', 'placement'}) before setUp.

    ``keep_flavors``: the API database already holds the operator's flavors (the judge), so
    nova's DefaultFlavorsFixture must not create them again."""

    db_urls = None
    keep_flavors = False

    def setUp(self):
        self.useFixture(fixtures.MonkeyPatch('nova.tests.fixtures.Database', database_fixture(self.db_urls['api'])))
        self.useFixture(fixtures.MonkeyPatch('nova.tests.fixtures.CellDatabases', FileCellDatabases))
        self.useFixture(fixtures.MonkeyPatch('placement.tests.fixtures.Database',
                                             placement_database_fixture(self.db_urls['placement'])))
        if self.keep_flavors:
            self.useFixture(fixtures.MonkeyPatch('nova.tests.fixtures.DefaultFlavorsFixture', fixtures.Fixture))
        super().setUp()

    def _setup_cells(self):
        """The cells the API database maps (nova-manage made them), not new ones."""
        celldbs = nova_fixtures.CellDatabases()
        ctxt = nova_context.get_admin_context()
        for cell in objects.CellMappingList.get_all(ctxt):
            self.cell_mappings[cell.name] = cell
            celldbs.add_cell_database(cell.database_connection, default=(cell.name == 'cell1'))
        self.useFixture(celldbs)
        # hosts the old release mapped keep their mapping (start_service creates missing ones)
        for mapping in objects.HostMappingList.get_all(ctxt):
            self.host_mappings[mapping.host] = mapping
