# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade twin (issue 29): a real older nova writes the state, the new release judges our roll.

Runs in the NEW release's venv (.venv-nova for nova 34, .venv-nova33 for nova 33; .ci/upgrade-twin.sh
runs both; conftest.py keeps the cases of the release at hand); for each case (old x new x kind):

1. ``writer.py`` in the OLD release's venv (.venv-nova31 / .venv-nova33): the release's own
   nova-manage / placement-manage create the databases (SQLite files), its functional harness
   boots guests through its API, and it writes the host description (tests/upgrade_twin/writer.py);
2. the upgrade, on a COPY of those files: nova 34's ``nova-manage api_db sync`` and
   ``db sync`` (cell1 and cell0) and Placement 16's ``placement-manage db sync``; every
   database must end at nova 34's / Placement 16's head revision;
3. our roll: the fake host is rebuilt from the description (sysfs, nova's own domain XML, the
   node's nova.conf) and ``ansible-playbook`` runs playbooks/rolling_reshape.yml (the rolling
   role: pre-flight, device_info, the reshape module over the REST backend, the report) on a
   one-node inventory against a real Placement server (tests/placement_server.py) on the
   upgraded Placement file (tests/upgrade_twin/roll.py; nova's services are stopped then, so
   the role's nova steps are off);
4. nova 34 judges: its harness runs on the upgraded files (tests/upgrade_twin/filedb.py: API,
   conductor, scheduler, in-process Placement on the same file) and nova 34's compute starts on
   the same host (same compute node uuid, the guests' domains defined before it starts): it must
   start cleanly, send ZERO writes to Placement, leave every provider, generation, inventory,
   trait, aggregate, allocation and consumer generation as our roll left it, and lay out a fresh
   tree exactly like ours; then nova 34's ``nova-manage placement audit --verbose`` and
   ``nova-manage placement heal_allocations --dry-run`` on the same databases find nothing.

Work directories stay under tests/output/upgrade-twin/<old>-to-<new>-<kind>/ for inspection.
"""

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys

from oslo_config import cfg

import fakehost
import filedb

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'tests', 'nova_oracle'))

from nova import version as nova_version  # noqa: E402
import mirror  # noqa: E402  (tests/nova_oracle)
import roll  # noqa: E402  (imports tests/nova_oracle's playbook.py)
from placement_server import PlacementServer  # noqa: E402
from test_nova_accepts import OracleTestBase, inventory_fields  # noqa: E402

CONF = cfg.CONF
#: the release judging in this process (34 in .venv-nova, 33 in .venv-nova33): conftest.py
#: deselects the cases another release judges
NEW_RELEASE = nova_version.version_string().split('.', 1)[0]
OUTPUT = os.path.join(REPO, 'tests', 'output', 'upgrade-twin')
OLD_VENVS = {'31': os.path.join(REPO, '.venv-nova31'), '33': os.path.join(REPO, '.venv-nova33')}
NEW_BIN = os.path.dirname(sys.executable)
#: the node's nova.conf changes that come with the upgrade, per kind
NEW_NOVA_CONF = {'pci': {'pci': {'report_in_placement': True}},
                 # the legacy vcpu_pin_set gives way to cpu_dedicated_set (None: the option goes)
                 'pcpu': {'DEFAULT': {'vcpu_pin_set': None}, 'compute': {'cpu_dedicated_set': '0-7'}}}
NEW_NOVA_CONF['pcpu-migrating'] = NEW_NOVA_CONF['pcpu']
NEW_NOVA_CONF['mixed'] = dict(NEW_NOVA_CONF['pci'], **NEW_NOVA_CONF['pcpu'])
DATABASES = ('nova_api.db', 'nova_cell0.db', 'nova_cell1.db', 'placement.db')


class TwinError(AssertionError):
    pass


def _run(cwd, argv, log_name, ok=(0,)):
    """Run a command in ``cwd``, output appended to ``cwd/log_name``; returns (rc, output)."""
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                          universal_newlines=True)
    with open(os.path.join(cwd, log_name), 'a') as log:
        log.write('$ %s\n%s[rc %d]\n' % (' '.join(argv), proc.stdout, proc.returncode))
    if proc.returncode not in ok:
        raise TwinError('%s failed (rc %d):\n%s' % (' '.join(argv), proc.returncode, proc.stdout[-4000:]))
    return proc.returncode, proc.stdout


def alembic_versions(directory):
    out = {}
    for name in DATABASES:
        with sqlite3.connect(os.path.join(directory, name)) as conn:
            out[name] = sorted(row[0] for row in conn.execute('SELECT version_num FROM alembic_version'))
    return out


def head_revisions():
    """nova 34's and Placement 16's alembic heads (from the migration scripts they ship)."""
    from alembic import config as alembic_config
    from alembic import script
    import nova.db.api
    import nova.db.main
    import placement.db.sqlalchemy

    def head(package, folder='migrations'):
        cfg_ = alembic_config.Config()
        cfg_.set_main_option('script_location', os.path.join(os.path.dirname(package.__file__), folder))
        return script.ScriptDirectory.from_config(cfg_).get_heads()

    main = sorted(head(nova.db.main))
    return {'nova_api.db': sorted(head(nova.db.api)), 'nova_cell0.db': main, 'nova_cell1.db': main,
            'placement.db': sorted(head(placement.db.sqlalchemy, 'alembic'))}


def placement_dump(adapter):
    """Everything nova could change, generations included (as OracleTestBase.dump, over HTTP)."""
    def get(url):
        resp = adapter.get(url, microversion='1.38', raise_exc=True)
        return resp.json()

    out = {'providers': {}, 'consumers': {}}
    consumers = set()
    for rp in get('/resource_providers')['resource_providers']:
        uuid = rp['uuid']
        allocs = get('/resource_providers/%s/allocations' % uuid)['allocations']
        consumers.update(allocs)
        out['providers'][rp['name']] = {
            'uuid': uuid, 'parent': rp['parent_provider_uuid'], 'generation': rp['generation'],
            'inventories': get('/resource_providers/%s/inventories' % uuid)['inventories'],
            'traits': sorted(get('/resource_providers/%s/traits' % uuid)['traits']),
            'aggregates': sorted(get('/resource_providers/%s/aggregates' % uuid)['aggregates']),
            'allocations': {c: a['resources'] for c, a in allocs.items()},
        }
    for consumer in sorted(consumers):
        body = get('/allocations/%s' % consumer)
        out['consumers'][consumer] = {
            'generation': body.get('consumer_generation'), 'type': body.get('consumer_type'),
            'allocations': {rp: a['resources'] for rp, a in body['allocations'].items()},
        }
    return out


def layout_by_name(dump):
    """The tree by provider name, without uuids and generations: {name: (parent name,
    inventories, traits, {consumer: resources})} (nova alone and our roll make different uuids)."""
    names = {p['uuid']: name for name, p in dump['providers'].items()}
    return {name: (names.get(p['parent']), p['inventories'], p['traits'], p['allocations'])
            for name, p in dump['providers'].items()}


def prepare(old, new, kind):
    """Steps 1-3 for one case; returns what the judge needs (all of it also on disk)."""
    if new != NEW_RELEASE:
        raise TwinError('this process runs nova %s, the case wants nova %s as the new release' % (NEW_RELEASE, new))
    work = os.path.join(OUTPUT, '%s-to-%s-%s' % (old, new, kind))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    old_dir, new_dir = os.path.join(work, 'old'), os.path.join(work, 'new')
    python = os.path.join(OLD_VENVS[old], 'bin', 'python')
    if not os.access(python, os.X_OK):
        raise TwinError('%s is missing: run .ci/upgrade-twin.sh (it builds the old releases\' venvs)' % python)
    # 1. the old release writes the state
    _run(work, [python, os.path.join(HERE, 'writer.py'), '--kind', kind, '--out', old_dir], 'writer.log')
    with open(os.path.join(old_dir, 'state.json')) as handle:
        state = json.load(handle)
    with open(os.path.join(old_dir, 'host.json')) as handle:
        spec = json.load(handle)
    # 2. the upgrade, on a copy
    shutil.copytree(old_dir, new_dir)
    before = alembic_versions(new_dir)
    nova_manage = [os.path.join(NEW_BIN, 'nova-manage'), '--config-file', 'nova.conf']
    _run(new_dir, nova_manage + ['api_db', 'sync'], 'upgrade.log')
    _run(new_dir, nova_manage + ['db', 'sync'], 'upgrade.log')
    _run(new_dir, [os.path.join(NEW_BIN, 'placement-manage'), '--config-file', 'placement.conf', 'db', 'sync'],
         'upgrade.log')
    after = alembic_versions(new_dir)
    # the control: the same upgraded databases, never rolled (nova 34 alone judges those)
    unrolled_dir = os.path.join(work, 'unrolled')
    shutil.copytree(new_dir, unrolled_dir)
    # the new nova.conf of the node (what the operator turns on with the upgrade)
    for section, options in NEW_NOVA_CONF.get(kind, {}).items():
        for name, value in options.items():
            if value is None:
                spec['nova_conf'].get(section, {}).pop(name, None)
            else:
                spec['nova_conf'].setdefault(section, {})[name] = value
        if not spec['nova_conf'].get(section, True):
            del spec['nova_conf'][section]
    with open(os.path.join(new_dir, 'host.json'), 'w') as handle:
        json.dump(spec, handle, indent=2, sort_keys=True)
    # 3. our roll on the host nova left, against Placement served from the upgraded file
    built = fakehost.build_host(os.path.join(new_dir, 'host'), spec, clean=True)
    qemu_dir = os.path.dirname(built['domain_xml_glob'])
    written = sorted(os.listdir(os.path.join(new_dir, 'domains')))
    if sorted(os.listdir(qemu_dir)) != written:
        raise TwinError('host.json and nova\'s domains disagree: %s vs %s' % (os.listdir(qemu_dir), written))
    for name in written:   # nova's own domain XML, not fakehost's
        shutil.copy(os.path.join(new_dir, 'domains', name), os.path.join(qemu_dir, name))
    server = PlacementServer(workdir=os.path.join(new_dir, 'placement-http'),
                             db_url=filedb.sqlite_url(os.path.join(new_dir, 'placement.db')))
    with server:
        legacy = placement_dump(server.adapter())
        # the roll as an operator runs it: the rolling role (device_info, then the reshape module over
        # the REST backend), ansible-playbook from the project venv (roll.py)
        record, posts, output = roll.roll(os.path.join(work, 'roll'), server.url, spec['hostname'], built,
                                          server.log_path)
        result = roll.as_result(record, output)
        rolled = placement_dump(server.adapter())
    twin = {'work': work, 'new_dir': new_dir, 'unrolled_dir': unrolled_dir, 'state': state, 'spec': spec, 'built': built,
            'alembic_before': before, 'alembic_after': after, 'legacy': legacy, 'result': result,
            'rolled': rolled, 'reshaper_posts': posts}
    with open(os.path.join(work, 'twin.json'), 'w') as handle:
        json.dump({k: v for k, v in twin.items() if k != 'built'}, handle, indent=2, sort_keys=True, default=str)
    return twin


class UpgradeTwinCase(filedb.FileDatabasesMixin, OracleTestBase):
    """One old release x one kind: prepare once (setUpClass), then nova 34 judges."""

    OLD = None
    NEW = '34'
    KIND = None
    keep_flavors = True
    twin = None
    #: nova-manage placement heal_allocations stops at the first vGPU guest (rc 8)
    HEAL_REFUSES_VGPU = False

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.twin = prepare(cls.OLD, cls.NEW, cls.KIND)

    def setUp(self):
        # a test named *_without_our_roll runs nova 34 on the upgraded databases we never rolled
        self.rolled = not self._testMethodName.endswith('_without_our_roll')
        new_dir = self.twin['new_dir' if self.rolled else 'unrolled_dir']
        self.db_dir = new_dir
        self.db_urls = {'api': 'sqlite:///nova_api.db', 'placement': filedb.sqlite_url(os.path.join(new_dir, 'placement.db'))}
        # the cells' URLs are relative to the deployment's directory (writer.py)
        cwd = os.getcwd()
        os.chdir(new_dir)
        self.addCleanup(os.chdir, cwd)
        super().setUp()
        self.spec = self.twin['spec']
        self.hostname = self.spec['hostname']
        self.built = self.twin['built']
        self.conf_files = mirror.load_nova_conf(CONF, self.built)

    def _get_connection(self, *args, **kwargs):
        """The host's libvirt with the guests nova left running, defined before nova starts."""
        connection = super()._get_connection(*args, **kwargs)
        mirror.define_domains(connection, self.built)
        return connection

    def start_new_nova(self):
        """nova 34's compute on the same host: same node uuid, the node's nova.conf, and the
        host facts the old release's harness gave its compute."""
        from oslo_utils.fixture import uuidsentinel
        from nova.virt.libvirt import driver as libvirt_driver
        # the harness gives a compute the node identity uuids.node_<hostname> (the compute_id
        # file of a real node): the one the old release's compute has in the cell database
        sentinel = 'node_%s' % self.hostname
        setattr(uuidsentinel, sentinel, self.twin['state']['compute_node_uuid'])
        self.addCleanup(delattr, uuidsentinel, sentinel)
        libvirt_driver.LibvirtDriver._get_local_gb_info.return_value = self.twin['state']['local_gb']
        stack = contextlib.ExitStack()
        if self.spec.get('sev'):
            # the SEV host: libvirt's domain capabilities from the host description, and the
            # kernel's kvm_amd parameter files (sev = 1) as nova's own SEV tests fake them
            # (nova.test.patch_exists / patch_open; nova 33 names them kvm_amd/parameters/<model>)
            import fixtures
            from nova import test as nova_test
            from nova.virt.libvirt import host as libvirt_host
            self.useFixture(fixtures.MonkeyPatch('nova.tests.fixtures.libvirt.virConnect._domain_capability_features',
                                                 mirror.domain_capability_features(self.built)))
            kernel = libvirt_host.SEV_KERNEL_PARAM_FILE
            if '%s' in kernel:
                kernel = kernel % 'sev'
            if self.spec['sev']['kernel'].get('sev_es'):
                raise TwinError('the twin fakes the kernel\'s sev parameter only')
            amd_sev = getattr(self.libvirt, 'amd_sev', None)
            if amd_sev is not None:
                # nova 34's LibvirtFixture stubs Host._kernel_supports_amd_sev itself (its
                # AmdSevFixture, every model False): the kernel's parameters are set there
                for flag, value in mirror.kernel_sev_flags(self.spec).items():
                    setattr(amd_sev, flag, value)
            else:
                stack.enter_context(nova_test.patch_exists(kernel, True))
                stack.enter_context(nova_test.patch_open(kernel, "1\n"))
        self.recording = []
        self.restart_mark = len(self.stdlog.logger.output)
        try:
            with stack:
                self.start_compute(hostname=self.hostname, pci_info=mirror.pci_info(self.spec, self.built),
                                   mdev_info=mirror.mdev_info(self.built))
        finally:
            writes, self.recording = self.recording, None
        self.compute = self.computes[self.hostname]
        self.root_uuid = self.compute_rp_uuids[self.hostname]
        return writes

    def nova_manage(self, argv, ok):
        """nova 34's nova-manage on the upgraded databases, Placement over HTTP."""
        new_dir = self.db_dir
        server = PlacementServer(workdir=os.path.join(new_dir, 'placement-http'),
                                 db_url=filedb.sqlite_url(os.path.join(new_dir, 'placement.db')))
        with server:
            conf = os.path.join(new_dir, 'nova-manage-placement.conf')
            with open(conf, 'w') as handle:
                handle.write('[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = %s\n'
                             'endpoint_override = %s\n' % (server.url, server.url))
            return _run(new_dir, [os.path.join(NEW_BIN, 'nova-manage'), '--config-file', 'nova.conf',
                                  '--config-file', conf, 'placement'] + argv, 'judge.log', ok=ok)

    def fresh_tree(self, dump):
        """The new release's driver laying out a FRESH tree for this node (the root alone, as for
        a new node).  One seed: the root's PCPU inventory as Placement has it, because the
        driver's VCPU -> PCPU check reads nova's own database (the compute node's pinned CPUs,
        real here: nova booted pinned guests) and asks for a reshape unless the tree it is given
        already reports PCPU, as the tree it reads from Placement at start-up does."""
        from nova.compute import provider_tree as nova_provider_tree
        fresh = nova_provider_tree.ProviderTree()
        fresh.new_root(self.hostname, self.root_uuid, generation=0)
        root = dump['providers'][self.hostname]['inventories']
        if 'PCPU' in root:
            fresh.update_inventory(self.hostname, {'PCPU': root['PCPU']})
        self.compute.driver.update_provider_tree(fresh, self.hostname)
        return fresh

    def assert_same_tree_as_novas(self, dump):
        """OracleTestBase's check on :meth:`fresh_tree`, and the root's inventory nova computes is
        the one Placement has after our roll."""
        fresh = super().assert_same_tree_as_novas(dump)
        self.assertEqual(inventory_fields(dump['providers'][self.hostname]['inventories']),
                         inventory_fields(fresh.data(self.root_uuid).inventory))

    def root_traits_nova_adds(self):
        """The traits the new release always puts on a compute node root: its libvirt driver's
        capability traits (a fresh tree, as for a new node) and the resource tracker's own
        (``_update_traits``: COMPUTE_NODE, and from nova 34 OWNER_NOVA, "Always mark the compute
        node").  A new release reports capability traits the old one did not know (nova 33:
        COMPUTE_SOUND_MODEL_*; nova 34: OWNER_NOVA), and the collection leaves root traits to
        nova: so nova's first start may PUT the root's traits, adding only these."""
        fresh = self.fresh_tree(self.dump())
        wanted = set(fresh.data(self.root_uuid).traits) | {'COMPUTE_NODE'}
        if int(NEW_RELEASE) >= 34:
            wanted.add('OWNER_NOVA')
        return wanted

    def split_root_trait_write(self, before, after, writes):
        """(writes other than the root's PUT traits, traits that PUT added); asserts that PUT only
        ADDED traits the new release always reports, and patches ``before`` with them."""
        root = before['providers'][self.hostname]
        put = 'PUT /resource_providers/%s/traits' % root['uuid']
        others = [w for w in writes if w != put]
        added = sorted(set(after['providers'][self.hostname]['traits']) - set(root['traits']))
        self.assertEqual([], sorted(set(root['traits']) - set(after['providers'][self.hostname]['traits'])),
                         'nova removed traits from the root')
        self.assertEqual(bool(added), put in writes, (added, writes))
        self.assertEqual(set(), set(added) - self.root_traits_nova_adds(), 'root traits nova does not report')
        if added:
            root['traits'] = sorted(root['traits'] + added)
            root['generation'] += 1
        self.root_traits_added = added
        return others, added

    def trait_rewrites(self, dump):
        """{child name: traits} the new release REPLACES on children our roll made (none: the
        collection lays out nova 34's tree)."""
        return {}

    def assert_only_root_trait_write(self, before, after, writes):
        """Placement after the new release started == before, but for the root traits it adds
        (and the root's generation) and the :meth:`trait_rewrites`: every other child, every
        inventory, allocation and consumer as our roll left them."""
        others, added = self.split_root_trait_write(before, after, writes)
        rewrites = self.trait_rewrites(before)
        self.assertEqual(sorted('PUT /resource_providers/%s/traits' % before['providers'][name]['uuid']
                                for name in rewrites), sorted(others),
                         'nova %s\'s compute wrote to Placement after our roll' % NEW_RELEASE)
        for name, traits in rewrites.items():
            before['providers'][name]['traits'] = traits
            before['providers'][name]['generation'] += 1
        self.assertEqual(before, after)
        with open(os.path.join(self.twin['work'], 'judged-%s.json' % self._testMethodName), 'w') as handle:
            json.dump({'writes': writes, 'root_traits_added': added}, handle, indent=2)

    def without_owner_nova(self, dump):
        """``dump`` without OWNER_NOVA on any provider (the root included): nova 34's trait, which
        no release before 34 sets anywhere (checked in the nova 31 and 33 wheels)."""
        out = json.loads(json.dumps(dump))
        for provider in out['providers'].values():
            provider['traits'] = [t for t in provider['traits'] if t != 'OWNER_NOVA']
        return out

    def assert_new_release_alone_ends_in(self, rolled, after, added=None):
        """The control's end: nova alone (``after``) ends where our roll ended (``rolled``), but
        for the root traits it adds (``added``; by default those its root has beyond ours).  A
        release before 34 alone sets OWNER_NOVA nowhere: our layout (nova 34's) is compared
        without it."""
        if int(NEW_RELEASE) < 34:
            rolled = self.without_owner_nova(rolled)
        ours, nova = layout_by_name(rolled), layout_by_name(after)
        root = self.hostname
        if added is None:
            added = sorted(set(nova[root][2]) - set(ours[root][2]))
        ours[root] = ours[root][:2] + (sorted(set(ours[root][2]) | set(added)),) + ours[root][3:]
        self.assertEqual(ours, nova)

    def judge(self):
        """Steps 2 and 4's assertions; returns the Placement state after nova 34 started."""
        heads = head_revisions()
        self.assertEqual(heads, self.twin['alembic_after'], 'the upgrade did not reach the new heads')
        before = self.dump()
        self.assertEqual(self.twin['rolled' if self.rolled else 'legacy'], before,
                         'Placement changed between the upgrade (and our roll) and nova 34')
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        after = self.dump()
        self.assert_only_root_trait_write(before, after, writes)
        if self.twin['rolled'] != self.twin['legacy']:
            # a plan that writes the node gives the root the traits nova 34 marks every compute
            # node with (layout.ROOT_TRAITS): the new release has none of them to add, nova 34
            # writes nothing at all, nova 33 only its own capability traits
            self.assertLessEqual({'COMPUTE_NODE', 'OWNER_NOVA'}, set(self.twin['rolled']['providers'][self.hostname]['traits']))
            self.assertNotIn('OWNER_NOVA', self.root_traits_added)
            if int(NEW_RELEASE) >= 34:
                self.assertEqual([], writes, 'nova 34 wrote to Placement after our roll')
        if int(NEW_RELEASE) >= 34:
            self.assert_same_tree_as_novas(after)
        else:
            # the collection lays out nova 34's tree: OWNER_NOVA on every child it makes, a trait
            # no earlier release sets (nor removes from a pGPU or SEV child): the rest is nova's
            self.assert_same_tree_as_novas(self.without_owner_nova(after))
        # nova 34's own tools on the same databases: rc 0 = no orphaned allocation (verbose prints
        # one line per orphan, and "can not be found" for a compute node it cannot map)
        _rc, out = self.nova_manage(['audit', '--verbose'], ok=(0,))
        for marker in ('Allocations were set against', 'can not be found', 'Not able', 'problems'):
            self.assertNotIn(marker, out)
        self.audit_output = out
        # rc 4 = "completed successfully but no allocations were created" (dry run: none needed);
        # nova refuses (rc 8) as soon as it meets an instance with a vGPU resource request:
        # heal_allocations cannot judge a vGPU host at all
        heal = ['heal_allocations', '--dry-run', '--verbose', '--skip-port-allocations']
        if self.HEAL_REFUSES_VGPU:
            _rc, out = self.nova_manage(heal, ok=(8,))
            self.assertIn('with vGPU resource request is not supported', out)
        else:
            _rc, out = self.nova_manage(heal, ok=(4,))
        self.heal_output = out
        return after


class VGPUCase(UpgradeTwinCase):
    """The old release booted three vGPU guests (flavors resources:VGPU=1, =1, =2) on a host with
    two pGPUs (nvidia-11): it already keeps VGPU on one child per pGPU (nova does since Stein),
    so no upgrade of these pairs moves VGPU.  nova 34 adds one trait, OWNER_NOVA, to each pGPU
    provider and to the root: our roll writes exactly that (no POST /reshaper) and the new release
    then writes nothing (nova 33: but its own root capability traits) and lays out the same tree."""

    KIND = 'vgpu'
    HEAL_REFUSES_VGPU = True

    def children(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        self.assertNotIn('VGPU', root['inventories'])
        return {name: p for name, p in legacy['providers'].items() if p['parent'] == root['uuid']}

    def test_upgrade(self):
        children = self.children()
        self.assertEqual({self.hostname + '_pci_0000_81_00_0', self.hostname + '_pci_0000_81_01_0'}, set(children))
        held = sorted(a.get('VGPU', 0) for p in children.values() for a in p['allocations'].values())
        self.assertEqual([1, 1, 2], held)
        for child in children.values():
            self.assertEqual(16, child['inventories']['VGPU']['total'])
            # nova 31 (and 33) set no trait on a pGPU provider; nova 34 adds OWNER_NOVA
            self.assertEqual([], child['traits'])
        result = self.twin['result']
        # nothing to move: no POST /reshaper; only the trait nova 34 wants, written before it
        # starts, on both pGPU providers and (the root marks) the root
        self.assertFalse(result['reshaper_applied'], result['msg'])
        self.assertEqual(0, result['moved']['consumers'])
        self.assertEqual({(name, 'OWNER_NOVA') for name in list(children) + [self.hostname]},
                         {(t['provider'], tuple(t['added'])[0]) for t in result['traits_written']})
        after = self.judge()
        for name in children:
            self.assertEqual(['OWNER_NOVA'], after['providers'][name]['traits'])
            self.assertEqual(children[name]['allocations'], after['providers'][name]['allocations'])

    def test_new_release_alone_without_our_roll(self):
        """The control: on the same upgraded databases without our roll, nova 34 starts and writes
        the trait itself (one PUT traits per pGPU provider, and the root's): the zero-writes check
        has teeth.  nova 33 has nothing to write there."""
        children = self.children()
        before = self.dump()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        others, _added = self.split_root_trait_write(before, self.dump(), writes)
        expected = []
        if int(NEW_RELEASE) >= 34:
            expected = ['PUT /resource_providers/%s/traits' % p['uuid'] for p in children.values()]
        self.assertEqual(sorted(expected), sorted(others))
        # and nova 34's audit is no blind check: an allocation of no instance on this node is named
        orphan = 'deadbeef-0000-4000-8000-000000000029'
        self.put_allocations(orphan, {self.root_uuid: {'VCPU': 1, 'MEMORY_MB': 64}})
        _rc, out = self.nova_manage(['audit', '--verbose'], ok=(3,))
        self.assertIn('Allocations were set against consumer UUID %s' % orphan, out)


class Test33To34VGPU(VGPUCase):
    OLD = '33'


class Test31To33VGPU(VGPUCase):
    """The SLURP step operators take from 2025.1: nova 31 writes, nova 33 (.venv-nova33) judges."""
    OLD = '31'
    NEW = '33'


class PCICase(UpgradeTwinCase):
    """The old release, with a PCI passthrough alias and ``[pci]report_in_placement`` off (the
    default of every release), booted one guest holding a type-PCI device (8086:1533) and one
    without; the upgrade turns ``report_in_placement`` on.  Our roll creates nova's PCI providers
    and moves the guest's device allocation there (nova's "healing") in one POST /reshaper; the
    new release then writes nothing (but its root traits), and ``heal_allocations --dry-run``,
    which heals PCI allocations from nova's OWN database claims (pci_devices), finds nothing."""

    KIND = 'pci'
    #: the PCI providers' traits once the new release started (nova 34 keeps OWNER_NOVA)
    PCI_TRAITS = ['COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA']

    def trait_rewrites(self, dump):
        """nova < 34's pci_placement_translator REPLACES a PCI provider's traits with
        COMPUTE_MANAGED_PCI_DEVICE (+ the device_spec's): the OWNER_NOVA our roll (nova 34's
        layout) put there goes, one PUT traits per PCI provider."""
        if int(NEW_RELEASE) >= 34:
            return {}
        return {name: [t for t in p['traits'] if t != 'OWNER_NOVA'] for name, p in dump['providers'].items()
                if 'COMPUTE_MANAGED_PCI_DEVICE' in p['traits'] and 'OWNER_NOVA' in p['traits']}

    def test_upgrade(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        self.assertEqual([self.hostname], list(legacy['providers']), 'nova 33 put PCI in Placement')
        holder = [d for d in self.spec['pci_devices'] if d['holder']]
        self.assertEqual(1, len(holder), self.spec['pci_devices'])
        guest = [i['uuid'] for i in self.spec['instances'] if i['name'] == holder[0]['holder']][0]
        result = self.twin['result']
        self.assertEqual('reshaped', result['status'], result['msg'])
        self.assertTrue(result['reshaper_applied'])
        after = self.judge()
        children = {name: p for name, p in after['providers'].items() if p['parent'] == root['uuid']}
        self.assertEqual({'%s_%s' % (self.hostname, d['address'].upper()) for d in self.spec['pci_devices']},
                         set(children))
        device = children['%s_%s' % (self.hostname, holder[0]['address'].upper())]
        self.assertEqual({guest: {'CUSTOM_PCI_8086_1533': 1}}, device['allocations'])
        for child in children.values():
            self.assertEqual(self.PCI_TRAITS, child['traits'])

    def test_new_release_alone_without_our_roll(self):
        """The control: nova 34 alone on the same upgraded databases creates the same PCI
        providers and heals the same allocation (its writes), ending where our roll ends."""
        before = self.dump()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        self.assertTrue(any(w.startswith('POST /resource_providers') for w in writes), writes)
        _others, added = self.split_root_trait_write(before, self.dump(), writes)
        rolled = json.loads(json.dumps(self.twin['rolled']))
        for name, traits in self.trait_rewrites(rolled).items():
            rolled['providers'][name]['traits'] = traits
        self.assert_new_release_alone_ends_in(rolled, self.dump(), added)
        self.assertNotEqual(before, self.dump())


class Test33To34PCI(PCICase):
    OLD = '33'


class Test31To33PCI(PCICase):
    """31 -> 33, judged by nova 33.  The collection lays out nova 34's PCI providers, with
    OWNER_NOVA (kinds/pci.py, with or without layout options); nova 33's
    pci_placement_translator REPLACES a PCI provider's traits with COMPUTE_MANAGED_PCI_DEVICE, so
    nova 33's first start PUTs the traits of both providers (OWNER_NOVA off): those two writes,
    and nothing else, are expected here."""
    OLD = '31'
    NEW = '33'
    PCI_TRAITS = ['COMPUTE_MANAGED_PCI_DEVICE']


class Test31To33SEV(UpgradeTwinCase):
    """The real SEV move of the SLURP step: nova 31 (2025.1) keeps MEM_ENCRYPTION_CONTEXT (and
    HW_CPU_X86_AMD_SEV) on the root; from 2025.2 nova reports it on ``<node>_amd_sev``.  nova 31
    booted two guests from an image with ``hw_mem_encryption`` (UEFI, q35) and one plain guest on
    a SEV host (kvm_amd sev=1, libvirt maxGuests 100); our roll moves the inventory and both
    guests' allocations to ``twin-sev_amd_sev`` in one POST /reshaper, then nova 33 judges."""

    OLD = '31'
    NEW = '33'
    KIND = 'sev'

    def test_upgrade(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        self.assertEqual(100, root['inventories']['MEM_ENCRYPTION_CONTEXT']['total'])
        self.assertIn('HW_CPU_X86_AMD_SEV', root['traits'])
        holders = sorted(c for c, a in root['allocations'].items() if 'MEM_ENCRYPTION_CONTEXT' in a)
        self.assertEqual(2, len(holders))
        result = self.twin['result']
        self.assertEqual('reshaped', result['status'], result['msg'])
        self.assertTrue(result['reshaper_applied'])
        self.assertEqual(2, result['moved']['consumers'])
        after = self.judge()
        child = after['providers'][self.hostname + '_amd_sev']
        self.assertEqual(100, child['inventories']['MEM_ENCRYPTION_CONTEXT']['total'])
        self.assertEqual(holders, sorted(child['allocations']))
        self.assertNotIn('MEM_ENCRYPTION_CONTEXT', after['providers'][self.hostname]['inventories'])
        self.assertNotIn('HW_CPU_X86_AMD_SEV', after['providers'][self.hostname]['traits'])

    def test_new_release_alone_without_our_roll(self):
        """The control: nova 33 alone makes the same move (its own POST /reshaper) and ends in
        our layout."""
        before = self.dump()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        self.assertIn('POST /reshaper', writes)
        after = self.dump()
        # but for the root's capability traits nova adds on every start (see split_root_trait_write)
        self.assert_new_release_alone_ends_in(self.twin['rolled'], after)
        self.assertNotEqual(before, after)


class Test33To34SEV(UpgradeTwinCase):
    """SEV for 33 -> 34: nothing moves.  nova 33 (2026.1) already reports MEM_ENCRYPTION_CONTEXT on
    ``<node>_amd_sev`` (since 2025.2); it booted two guests from a ``hw_mem_encryption`` image and
    one plain guest on the SEV host (kvm_amd sev=1, libvirt maxGuests 100).  Our roll must send no
    POST /reshaper and change nothing but add nova 34's OWNER_NOVA; nova 34 then judges."""

    OLD = '33'
    KIND = 'sev'

    def sev_child(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        self.assertNotIn('MEM_ENCRYPTION_CONTEXT', root['inventories'])
        child = legacy['providers'][self.hostname + '_amd_sev']
        self.assertEqual(root['uuid'], child['parent'])
        return child

    def test_upgrade(self):
        legacy, rolled = self.twin['legacy'], self.twin['rolled']
        child = self.sev_child()
        self.assertEqual(100, child['inventories']['MEM_ENCRYPTION_CONTEXT']['total'])
        self.assertIn('HW_CPU_X86_AMD_SEV', child['traits'])
        self.assertNotIn('OWNER_NOVA', child['traits'])
        # the writer boots the two guests from the hw_mem_encryption image first (host.json cannot
        # tell them: fakelibvirt's XMLDesc drops nova's <launchSecurity>)
        holders = sorted(i['uuid'] for i in self.spec['instances'][:2])
        self.assertEqual(holders, sorted(child['allocations']))
        result = self.twin['result']
        self.assertFalse(result['reshaper_applied'], result['msg'])
        self.assertEqual(0, result['moved']['consumers'])
        self.assertEqual(0, self.twin['reshaper_posts'])
        # the roll changed nothing but traits, and only ADDED OWNER_NOVA (the SEV child must get it)
        self.assertEqual(legacy['consumers'], rolled['consumers'])
        self.assertEqual(set(legacy['providers']), set(rolled['providers']))
        for name, provider in legacy['providers'].items():
            ours = rolled['providers'][name]
            self.assertEqual((provider['parent'], provider['inventories'], provider['allocations'], provider['aggregates']),
                             (ours['parent'], ours['inventories'], ours['allocations'], ours['aggregates']))
            self.assertEqual([], sorted(set(provider['traits']) - set(ours['traits'])), name)
            self.assertIn(sorted(set(ours['traits']) - set(provider['traits'])), ([], ['OWNER_NOVA']), name)
        self.assertIn('OWNER_NOVA', rolled['providers'][self.hostname + '_amd_sev']['traits'])
        after = self.judge()
        self.assertEqual(holders, sorted(after['providers'][self.hostname + '_amd_sev']['allocations']))
        self.assertIn('up-to-date', self.heal_output)

    def test_new_release_alone_without_our_roll(self):
        """The control: nova 34 alone PUTs the SEV child's traits (OWNER_NOVA), no reshape, and ends
        in our layout."""
        child = self.sev_child()
        before = self.dump()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        self.assertNotIn('POST /reshaper', writes)
        self.assertIn('PUT /resource_providers/%s/traits' % child['uuid'], writes)
        after = self.dump()
        self.assert_new_release_alone_ends_in(self.twin['rolled'], after)
        self.assertNotEqual(before, after)


class PCPUCase(UpgradeTwinCase):
    """Train's VCPU -> PCPU move, still open on a host that kept the legacy ``vcpu_pin_set``: the
    old release (``vcpu_pin_set = 0-7``) reports VCPU 8 and booted two ``hw:cpu_policy=dedicated``
    guests that hold VCPU 2 each (the fallback query), pinned to host CPUs by nova (domain XML
    ``<vcpupin>``).  The upgrade replaces ``vcpu_pin_set`` with ``[compute]cpu_dedicated_set =
    0-7``: our roll reports PCPU 8 on the root, drops VCPU (no shared set) and moves both guests'
    VCPU to PCPU in one POST /reshaper; the new release then judges."""

    KIND = 'pcpu'

    def test_upgrade(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        self.assertEqual(8, root['inventories']['VCPU']['total'])
        self.assertNotIn('PCPU', root['inventories'])
        guests = sorted(i['uuid'] for i in self.spec['instances'])
        self.assertEqual([2, 2], [root['allocations'][g]['VCPU'] for g in guests])
        result = self.twin['result']
        self.assertEqual('reshaped', result['status'], result['msg'])
        self.assertTrue(result['reshaper_applied'])
        self.assertEqual(2, result['moved']['consumers'])
        after = self.judge()
        root = after['providers'][self.hostname]
        self.assertEqual(8, root['inventories']['PCPU']['total'])
        self.assertNotIn('VCPU', root['inventories'])
        self.assertEqual([2, 2], [root['allocations'][g].get('PCPU') for g in guests])

    def test_new_release_alone_without_our_roll(self):
        """The control: nova 34 alone makes the same move (its own POST /reshaper) and ends in
        our layout."""
        before = self.dump()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        self.assertIn('POST /reshaper', writes)
        after = self.dump()
        self.assert_new_release_alone_ends_in(self.twin['rolled'], after)
        self.assertNotEqual(before, after)


class Test33To34PCPU(PCPUCase):
    OLD = '33'


class Test31To33PCPU(PCPUCase):
    """31 -> 33: nova 31 writes the pinned-CPU host, nova 33 judges."""
    OLD = '31'
    NEW = '33'


class PCPUMigrationInFlightCase(UpgradeTwinCase):
    """The PCPU host of :class:`PCPUCase` with a cold migration in flight, as nova's own
    ReshapeForPCPUsTest leaves one: the old release migrated the second pinned guest to a second
    host and it waits in VERIFY_RESIZE; nova's migration record holds that guest's VCPU on THIS
    host (the instance holds the destination's).  Our roll must defer this host and change nothing
    (no domain explains the migration consumer: the collection cannot tell it pinned or not)."""

    KIND = 'pcpu-migrating'

    def migration(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        guests = set(i['uuid'] for i in self.spec['instances'])
        others = [c for c in root['allocations'] if c not in guests]
        self.assertEqual(1, len(others), root['allocations'])
        self.assertEqual(2, root['allocations'][others[0]]['VCPU'])
        return others[0]

    def test_migration_host_deferred_and_untouched(self):
        migration = self.migration()
        result = self.twin['result']
        self.assertEqual('deferred', result['status'], result.get('msg'))
        self.assertIn(migration, result['deferred_reason'])
        self.assertEqual(self.twin['legacy'], self.twin['rolled'])
        # nova's records agree: an unconfirmed migration, source this host
        _rc, out = self.nova_manage(['audit', '--verbose'], ok=(0,))
        self.assertNotIn('Allocations were set against', out)

    def test_new_release_alone_without_our_roll(self):
        """What nova 34 does on the host we deferred: its own start-up PCPU reshape, which
        converts the migration record's VCPU on this host too (nova's ReshapeForPCPUsTest)."""
        migration = self.migration()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        self.assertIn('POST /reshaper', writes)
        root = self.dump()['providers'][self.hostname]
        self.assertEqual({'PCPU': 2}, {rc: n for rc, n in root['allocations'][migration].items() if rc in ('VCPU', 'PCPU')})


class Test33To34PCPUMigrationInFlight(PCPUMigrationInFlightCase):
    OLD = '33'


class Test31To33PCPUMigrationInFlight(PCPUMigrationInFlightCase):
    """31 -> 33: nova 31 leaves the migration in flight, nova 33 judges."""
    OLD = '31'
    NEW = '33'


class MixedCase(PCICase):
    """One host, two kinds moved at once (writer kind ``mixed``): the old release on the legacy
    ``vcpu_pin_set = 0-7`` with two type-PCI devices (8086:1533, ``report_in_placement`` off)
    booted a pinned guest holding a device and a pinned guest without.  The upgrade replaces
    ``vcpu_pin_set`` with ``[compute]cpu_dedicated_set = 0-7`` and turns ``report_in_placement``
    on: our roll reports PCPU 8 (no VCPU), creates both PCI providers, and moves both guests' VCPU
    to PCPU and the first guest's device to its PCI provider in ONE POST /reshaper."""

    KIND = 'mixed'

    def test_upgrade(self):
        legacy = self.twin['legacy']
        root = legacy['providers'][self.hostname]
        self.assertEqual([self.hostname], list(legacy['providers']), 'the old release put PCI in Placement')
        self.assertEqual(8, root['inventories']['VCPU']['total'])
        self.assertNotIn('PCPU', root['inventories'])
        guests = [i['uuid'] for i in self.spec['instances']]
        self.assertEqual([2, 2], [root['allocations'][g]['VCPU'] for g in guests])
        holder = [d for d in self.spec['pci_devices'] if d['holder']]
        self.assertEqual(1, len(holder), self.spec['pci_devices'])
        self.assertEqual(self.spec['instances'][0]['name'], holder[0]['holder'])
        result = self.twin['result']
        self.assertEqual('reshaped', result['status'], result['msg'])
        self.assertTrue(result['reshaper_applied'])
        self.assertEqual(2, result['moved']['consumers'])
        self.assertEqual(1, self.twin['reshaper_posts'])
        after = self.judge()
        root = after['providers'][self.hostname]
        self.assertEqual(8, root['inventories']['PCPU']['total'])
        self.assertNotIn('VCPU', root['inventories'])
        self.assertEqual([2, 2], [root['allocations'][g].get('PCPU') for g in guests])
        children = {name: p for name, p in after['providers'].items() if p['parent'] == root['uuid']}
        self.assertEqual({'%s_%s' % (self.hostname, d['address'].upper()) for d in self.spec['pci_devices']},
                         set(children))
        device = children['%s_%s' % (self.hostname, holder[0]['address'].upper())]
        self.assertEqual({guests[0]: {'CUSTOM_PCI_8086_1533': 1}}, device['allocations'])
        for child in children.values():
            self.assertEqual(self.PCI_TRAITS, child['traits'])
        self.assertIn('up-to-date', self.heal_output)

    def test_new_release_alone_without_our_roll(self):
        """The control: the new release alone on the same upgraded databases makes both moves
        itself (its own POST /reshaper for PCPU, the PCI providers and the healed allocation)
        and ends where our roll ends."""
        before = self.dump()
        writes = self.start_new_nova()
        self.assert_started_cleanly(self.restart_mark)
        self.assertIn('POST /reshaper', writes)
        self.assertTrue(any(w.startswith('POST /resource_providers') for w in writes), writes)
        rolled = json.loads(json.dumps(self.twin['rolled']))
        for name, traits in self.trait_rewrites(rolled).items():
            rolled['providers'][name]['traits'] = traits
        after = self.dump()
        self.assert_new_release_alone_ends_in(rolled, after)
        self.assertNotEqual(before, after)


class Test33To34Mixed(MixedCase):
    OLD = '33'


class Test31To33Mixed(MixedCase):
    """31 -> 33, judged by nova 33 (which, as in Test31To33PCI, puts back its own PCI traits:
    the two expected PUTs)."""
    OLD = '31'
    NEW = '33'
    PCI_TRAITS = ['COMPUTE_MANAGED_PCI_DEVICE']


class Test31To34Refused(UpgradeTwinCase):
    """nova 34 does not take a deployment nova 31 (2025.1) ran: its services refuse to start while
    a nova-compute service record of 31 (service version 68, "Epoxy") exists, because nova 34's
    oldest supported compute is Gazpacho (2026.1, nova 33, version 72): nova.objects.service
    OLDEST_SUPPORTED_SERVICE_VERSION.  The schema upgrade itself succeeds.  31 -> 34 is not an
    upgrade nova supports (2025.1 -> 2026.1 is the SLURP step, then 2026.1 -> 2026.2)."""

    OLD = '31'
    KIND = 'vgpu'

    def setUp(self):
        from nova import exception
        try:
            super().setUp()
        except exception.TooOldComputeService as exc:
            self.refusal = exc
        else:
            self.refusal = None

    def test_nova_34_refuses_a_nova_31_deployment(self):
        self.assertIsNotNone(self.refusal, 'nova 34 started on the databases of a nova 31 deployment')
        self.assertIn('minimum compute service level in your system is 68', str(self.refusal))
        self.assertIn('oldest supported service level is 72', str(self.refusal))
        self.assertEqual(head_revisions(), self.twin['alembic_after'])
