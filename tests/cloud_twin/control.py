# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane's child processes of the cloud twin (tests/cloud_twin/cloud.py starts them).

Run by the venv of the service, never imported by the test process (stdlib only at module level):

    python control.py keystone-prep CONF_DIR PUBLIC_URL      (project venv: Keystone 30)
        what ``keystone-manage db_sync`` then ``keystone-manage bootstrap`` do, in one process:
        the schema on MariaDB, domain Default, project admin, user admin (password from
        OS_BOOTSTRAP_PASSWORD), the roles, region RegionOne, the identity service's public,
        internal and admin endpoints at PUBLIC_URL.
    python control.py nova SERVICE --config-file F ...         (nova 34's venv)
        nova's own entry point (``nova.cmd.conductor.main``, ``nova.cmd.scheduler.main``) after
        applying nova's functional ``GlanceFixture`` (no Glance here: an in-memory image service
        stub with nova's test images, the only stand-in of the control plane).

The WSGI files uWSGI loads (Keystone, Placement, nova-api) are written by cloud.py; nova-api's
applies the same GlanceFixture before nova's ``wsgi_app.init_application('osapi_compute')``.
"""

import os
import sys


def keystone_prep(conf_dir, public_url):
    import keystone.server
    from keystone.cmd.bootstrap import Bootstrapper
    from keystone.common.sql import upgrades

    sys.argv[1:] = []
    keystone.server.configure(config_files=[os.path.join(conf_dir, 'keystone.conf')])
    upgrades.offline_sync_database_to_version()   # keystone-manage db_sync
    boot = Bootstrapper()                           # keystone-manage bootstrap
    boot.admin_password = os.environ['OS_BOOTSTRAP_PASSWORD']
    boot.admin_username = 'admin'
    boot.project_name = 'admin'
    boot.admin_role_name = 'admin'
    boot.service_name = 'keystone'
    boot.public_url = boot.internal_url = boot.admin_url = public_url
    boot.region_id = 'RegionOne'
    boot.immutable_roles = True
    boot.bootstrap()
    return 0


class _Test(object):
    """What nova's fixtures ask of their ``test`` argument (``stub_out``, ``useFixture``) outside a test."""

    def __init__(self):
        import fixtures
        self._fixtures = fixtures

    def stub_out(self, old, new):
        self._fixtures.MonkeyPatch(old, new).setUp()

    def useFixture(self, fixture):    # noqa: N802 (the testtools name)
        fixture.setUp()
        return fixture

    def flags(self, **kwargs):
        _ConfPatcher(**kwargs).setUp()


class _ConfPatcher(object):
    """``nova_fixtures.ConfPatcher``'s part that GlanceFixture uses: set_override for good."""

    def __init__(self, group=None, **kwargs):
        self.group = group
        self.values = kwargs

    def setUp(self):                  # noqa: N802
        import nova.conf
        for name, value in self.values.items():
            nova.conf.CONF.set_override(name, value, group=self.group)


def _fixture_module(name):
    """nova/tests/fixtures/NAME.py (glance, neutron), loaded alone: the package's __init__ imports
    eventlet (through its other fixtures), which nova 34's threading services refuse once they are
    patched; these two need only ``ConfPatcher`` and ``PROJECT_ID`` from their sibling ``nova.py``."""
    import importlib.util
    import types

    import nova
    pkgdir = os.path.join(os.path.dirname(nova.__file__), 'tests', 'fixtures')
    names = ('nova.tests.fixtures', 'nova.tests.fixtures.nova')
    saved = dict((name, sys.modules.get(name)) for name in names)
    package = types.ModuleType(names[0])
    package.__path__ = [pkgdir]
    sibling = types.ModuleType(names[1])
    sibling.ConfPatcher = _ConfPatcher
    sibling.PROJECT_ID = '6f70656e737461636b20342065766572'   # nova_fixtures.PROJECT_ID
    sys.modules.update({names[0]: package, names[1]: sibling})
    try:
        spec = importlib.util.spec_from_file_location('cloud_twin_%s_fixture' % name, os.path.join(pkgdir, name + '.py'))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module


def stub_image_service():
    """nova's functional GlanceFixture and NeutronFixture, applied for good in this process (no Glance,
    no Neutron in the twin: nova's in-memory test images; the guests have no ports, and what nova asks
    neutron (a server's security groups, ...) is answered by nova's fake)."""
    test = _Test()
    _fixture_module('glance').GlanceFixture(test).setUp()
    _fixture_module('neutron').NeutronFixture(test).setUp()


def run_nova(service, argv):
    sys.argv = ['nova-%s' % service] + list(argv)
    if service == 'conductor':
        from nova.cmd import conductor as cmd     # nova's own monkey_patch.patch() runs first
    elif service == 'scheduler':
        from nova.cmd import scheduler as cmd
    else:
        raise SystemExit('control.py nova: conductor or scheduler, not %r' % service)
    stub_image_service()
    return cmd.main()


def main(argv):
    if len(argv) >= 3 and argv[0] == 'keystone-prep':
        return keystone_prep(argv[1], argv[2])
    if len(argv) >= 2 and argv[0] == 'nova':
        return run_nova(argv[1], argv[2:])
    sys.stderr.write('usage: control.py keystone-prep CONF_DIR URL | nova conductor|scheduler ARGS...\n')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]) or 0)
