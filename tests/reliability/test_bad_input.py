# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property-based bad input (issue 12, figure d): 0 tracebacks, 0 changes on failure.

Every target runs the REAL module code in-process (``main()``, as Ansible runs it) on a
copy of a seeded embedded store and a sandbox of files, with one piece of its input made
bad by hypothesis:

* module parameters of every module (a value replaced by junk of any type, or deleted);
* the device report given to reshape (``devices``), as device_info returns it;
* sysfs trees, libvirt domain XML and nova.conf of a fake host (tools/fakehost.py), read
  by device_info;
* state files: a snapshot (reshape state=rolled_back / verified, fleet_report deriving a
  node from it) and node records (given to fleet_report, or stored in its ``nodes/``).

For each example: a failure must be a clean one (``fail_json`` with a message, never
"Unexpected error", never an exception escaping ``main()``), and a failed run must leave
the store (full SQL dump) and every file of the sandbox as they were.  fleet_report must
also succeed whatever one record looks like (a bad record never sinks the report).

Figures: a table per target (examples, clean failures, tracebacks, changes on failure),
printed at the end of the module (``-s``, or ``-p no:xdist`` so the terminal reporter shows
it) and written to ``tests/output/reliability/bad_input.txt``.

Short run (part of the normal pytest run when tests/reliability is collected):
``RELIABILITY_EXAMPLES`` examples per target (default 8), derandomized.
Full run: ``RELIABILITY_FULL=1`` (default 200 examples per target, random seed; override
with ``RELIABILITY_EXAMPLES``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import (
    allocation,
    allocation_info,
    device_info,
    fleet_report,
    inventory,
    placement_preflight,
    reshape,
    resource_provider,
    resource_provider_info,
)

import fakehost
from bad_input_support import Tally, junk, mutate, run_main, state_of, traceback_of

from test_reshaper_support import flat_gpu_node

FULL = os.environ.get('RELIABILITY_FULL', '') not in ('', '0')
EXAMPLES = int(os.environ.get('RELIABILITY_EXAMPLES') or (200 if FULL else 8))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not FULL,
                    suppress_health_check=list(HealthCheck))
NODE = 'compute-01'
RUN_ID = 'run-bad-input'
PATH_OPTIONS = ('embedded_db', 'snapshot_dir', 'snapshot', 'dest', 'sysfs_root', 'domain_xml_glob', 'nova_conf',
                'domain_capabilities')
TALLY = Tally()


# ---------------------------------------------------------------------------
# the world every example starts from

@pytest.fixture(scope='module')
def world(tmp_path_factory):
    """A template sandbox: a seeded store, a snapshot of a reshape, node records, fake hosts."""
    base = str(tmp_path_factory.mktemp('bad-input'))
    template = os.path.join(base, 'template')
    os.makedirs(template)
    gpu_host = fakehost.build_host(os.path.join(base, 'gpu-host'), fakehost.default_gpu_host(NODE, spare_mdevs=1))
    report = discovery.discover(gpu_host['sysfs_root'], domain_xml_glob=gpu_host['domain_xml_glob'], hostname=NODE)
    db = os.path.join(template, 'placement.db')
    backend = EmbeddedBackend(db)
    try:
        built = flat_gpu_node(backend, NODE, report)
        consumer = sorted(built['consumers'])[0]
        # a second copy of the node, reshaped, gives a real snapshot and a real reshape result
        snap_dir = os.path.join(template, 'snapshots')
        other = flat_gpu_node(backend, 'compute-02', dict(report, hostname='compute-02'), with_pool=False)
        del other
        result = reshaper.reshape_node(backend, 'compute-02', dict(report, hostname='compute-02'),
                                       snapshot_dir=snap_dir, run_id=RUN_ID)
    finally:
        backend.close()
    assert result['status'] == 'reshaped', result
    snapshot_file = result['snapshot']
    with open(snapshot_file) as handle:
        snapshot_doc = json.load(handle)
    records = [
        {'node': 'compute-02', 'status': 'reshaped', 'started': 10.0, 'finished': 12.5,
         'reshape': json.loads(json.dumps(result, default=str))},
        {'node': NODE, 'status': 'noop', 'started': 13.0, 'finished': 13.5, 'reshape': {'status': 'noop'}},
    ]
    mixed = fakehost.build_host(os.path.join(base, 'host-template', 'host'), fakehost.mixed_host(NODE))
    with open(mixed['nova_conf']) as handle:
        nova_conf_text = handle.read()
    with open(mixed['xml_paths'][0]) as handle:
        domain_xml = handle.read()
    return {
        'base': base, 'template': template, 'report': report, 'consumer': consumer,
        'snapshot_name': os.path.relpath(snapshot_file, template), 'snapshot_doc': snapshot_doc,
        'records': records, 'host_template': os.path.join(base, 'host-template', 'host'),
        'host': {k: os.path.relpath(v, os.path.join(base, 'host-template')) if isinstance(v, str) and
                 v.startswith(base) else v for k, v in mixed.items()},
        'nova_conf_text': nova_conf_text, 'domain_xml': domain_xml,
    }


class Sandbox(object):
    """A fresh copy of the template for one example (removed afterwards)."""

    def __init__(self, world, with_host=False):
        self.root = tempfile.mkdtemp(prefix='ex-', dir=world['base'])
        shutil.rmtree(self.root)
        shutil.copytree(world['template'], self.root, symlinks=True)
        if with_host:
            shutil.copytree(world['host_template'], os.path.join(self.root, 'host'), symlinks=True)
        self.db = os.path.join(self.root, 'placement.db')
        for name in ('empty.db',):
            open(os.path.join(self.root, name), 'wb').close()
        with open(os.path.join(self.root, 'garbage.db'), 'wb') as handle:
            handle.write(b'not a database\n' * 64)
        self.world = world

    def path(self, relative):
        return os.path.join(self.root, relative)

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def _confine(sandbox, args):
    """Path options that junk turned into something else point INSIDE the sandbox (never at /)."""
    for key in PATH_OPTIONS:
        if key not in args or args[key] is None:
            continue
        value = args[key]
        if isinstance(value, str) and value.startswith(sandbox.root):
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        text = text.replace('\x00', '').lstrip('/').replace('..', '__')[:80]
        args[key] = sandbox.path(text or 'missing')
    return args


def _judge(target, main, args, sandbox, must_succeed=False):
    before = state_of(sandbox.db, sandbox.root)
    rc, result, escaped = run_main(main, args)
    why = traceback_of(rc, result, escaped)
    changed = False
    if rc != 0:
        changed = state_of(sandbox.db, sandbox.root) != before
    if must_succeed and rc != 0 and not why:
        why = 'must not fail: %s' % result.get('msg')
    TALLY.record(target, rc, why, changed, json.dumps(args, default=str)[:300])
    assert not why, '%s: %s\nargs: %s' % (target, why, json.dumps(args, default=str)[:2000])
    assert not changed, '%s: a failed run changed the store or a file: %s' % (target, result.get('msg'))
    return rc, result


def _run_and_record(example, record_property, targets):
    """Run the hypothesis examples; record this test's figures (tests/reliability/conftest.py prints them)."""
    try:
        example()
    finally:
        lines = []
        for target in targets:
            row = TALLY.row(target)
            lines.append('bad input %-32s examples %4d  clean failures %4d  tracebacks %d  changes on failure %d'
                         % (target, row['examples'], row['failed_runs'], row['tracebacks'],
                            row['changes_on_failure']))
        record_property('reliability_figures', '\n'.join(lines))


@pytest.fixture(scope='module', autouse=True)
def figures(request):
    yield
    text = TALLY.table('bad input: %d examples per target (%s run)' % (EXAMPLES, 'full' if FULL else 'short'))
    print('\n' + text)
    reporter = request.config.pluginmanager.get_plugin('terminalreporter')
    if reporter is not None:
        reporter.write_line('')
        for line in text.splitlines():
            reporter.write_line(line)
    out = os.path.join(str(request.config.rootpath), 'tests', 'output', 'reliability')
    try:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, 'bad_input.txt'), 'w') as handle:
            handle.write(text + '\n')
        with open(os.path.join(out, 'bad_input.json'), 'w') as handle:
            json.dump(TALLY.rows, handle, indent=1, sort_keys=True)
    except OSError:
        pass


# ---------------------------------------------------------------------------
# module parameters

def _module_args(world, sandbox):
    report = world['report']
    return {
        'inventory': (inventory.main, {'resource_provider': NODE, 'resource_class': 'CUSTOM_X', 'total': 4,
                                       'allocation_ratio': 1.0, 'min_unit': 1, 'max_unit': 4}),
        'resource_provider': (resource_provider.main, {'name': NODE, 'traits': ['CUSTOM_A'], 'aggregates': []}),
        'resource_provider_info': (resource_provider_info.main, {'in_tree': NODE, 'with_allocations': True}),
        'allocation': (allocation.main, {'consumer_uuid': world['consumer'], 'project_id': 'p', 'user_id': 'u',
                                         'allocations': [{'resource_provider': NODE, 'resources': {'VCPU': 1}}]}),
        'allocation_info': (allocation_info.main, {'in_tree': NODE}),
        'placement_preflight': (placement_preflight.main, {'providers': [NODE, 'compute-02'],
                                                           'min_microversion': '1.30'}),
        'reshape': (reshape.main, {'root_provider': NODE, 'devices': report, 'nova_migrations': 'never',
                                   'snapshot_dir': sandbox.path('snapshots'), 'layout': {'gpu': {'allocation_ratio': 1.0}},
                                   'ownership_policy': 'strict', 'run_id': 'r2'}),
        'reshape rolled_back': (reshape.main, {'root_provider': 'compute-02', 'state': 'rolled_back',
                                               'snapshot_dir': sandbox.path('snapshots'), 'nova_migrations': 'never'}),
        'fleet_report': (fleet_report.main, {'dest': sandbox.path('report'), 'records': world['records'],
                                             'hosts': [NODE, 'compute-02'], 'run_id': RUN_ID,
                                             'snapshot_dir': sandbox.path('snapshots'), 'latest_link': False}),
        'device_info': (device_info.main, {'sysfs_root': sandbox.path(world['host']['sysfs_root']),
                                           'domain_xml_glob': sandbox.path(world['host']['domain_xml_glob']),
                                           'nova_conf': sandbox.path(world['host']['nova_conf']),
                                           'pci_filters': [{'vendor_id': '10de'}]}),
    }


_STORE_CHOICES = ('placement.db', 'empty.db', 'garbage.db', 'missing/placement.db', '', 'new.db')
MODULES = ('inventory', 'resource_provider', 'resource_provider_info', 'allocation', 'allocation_info',
           'placement_preflight', 'reshape', 'reshape rolled_back', 'fleet_report', 'device_info')


@pytest.mark.parametrize('name', MODULES)
def test_module_parameters(world, name, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world, with_host=name == 'device_info')
        try:
            main, base = _module_args(world, sandbox)[name]
            if name != 'device_info':
                base = dict(base, embedded_db=sandbox.db)
            how = data.draw(st.sampled_from(['mutate', 'mutate', 'mutate', 'add', 'store']), label='how')
            if how == 'store' and name != 'device_info':
                args = dict(base, embedded_db=sandbox.path(data.draw(st.sampled_from(_STORE_CHOICES), label='store')))
            elif how == 'add':
                args = dict(base)
                args[data.draw(st.sampled_from(['bogus', 'state', 'check_mode', 'name', 'uuid']), label='key')] = \
                    data.draw(junk(), label='value')
            else:
                args = mutate(data, base, 'args')
                if not isinstance(args, dict):
                    args = {'junk': args}
            args = _confine(sandbox, args)
            check = data.draw(st.booleans(), label='check mode')
            if check:
                args['_ansible_check_mode'] = True
            _judge('params: %s' % name, main, args, sandbox)
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['params: %s' % name])


# ---------------------------------------------------------------------------
# the device report given back to reshape

def test_device_report_given_to_reshape(world, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world)
        try:
            devices = mutate(data, world['report'], 'devices')
            state = data.draw(st.sampled_from(['reshaped', 'verified']), label='state')
            args = {'embedded_db': sandbox.db, 'root_provider': NODE, 'devices': devices, 'state': state,
                    'snapshot_dir': sandbox.path('snapshots'), 'nova_migrations': 'never'}
            if state == 'verified':
                args['snapshot'] = sandbox.path(world['snapshot_name'])
                args['root_provider'] = 'compute-02'
            _judge('devices: reshape %s' % state, reshape.main, args, sandbox)
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['devices: reshape reshaped', 'devices: reshape verified'])


# ---------------------------------------------------------------------------
# fake hosts: sysfs, domain XML, nova.conf

def _files_under(folder):
    found = []
    for base, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names + dirs):
            found.append(os.path.join(base, name))
    return found


def _device_info_args(world, sandbox):
    host = world['host']
    return {'sysfs_root': sandbox.path(host['sysfs_root']), 'domain_xml_glob': sandbox.path(host['domain_xml_glob']),
            'nova_conf': sandbox.path(host['nova_conf']), 'pci_filters': [{'vendor_id': '8086'}]}


def test_sysfs_tree(world, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world, with_host=True)
        try:
            sysfs = sandbox.path(world['host']['sysfs_root'])
            for _round in range(data.draw(st.integers(min_value=1, max_value=3), label='rounds')):
                target = data.draw(st.sampled_from(_files_under(sysfs)), label='path')
                action = data.draw(st.sampled_from(['bytes', 'text', 'delete', 'dir', 'loop', 'dangling']), label='do')
                if os.path.islink(target) or os.path.isfile(target):
                    os.unlink(target)
                elif os.path.isdir(target):
                    shutil.rmtree(target)
                if action == 'bytes':
                    with open(target, 'wb') as handle:
                        handle.write(data.draw(st.binary(max_size=40), label='bytes'))
                elif action == 'text':
                    with open(target, 'w') as handle:
                        handle.write(data.draw(st.sampled_from(['', '-1', '0x', '0xzzzz', '99999999999999999999',
                                                                '0-', '3-1', 'Node 0 MemTotal: x kB', '1,,2',
                                                                '0000:84:00.0', 'nan', '\n\n']), label='text'))
                elif action == 'dir':
                    os.makedirs(target)
                elif action == 'loop':
                    os.symlink(os.path.basename(target), target)
                elif action == 'dangling':
                    os.symlink(os.path.join(sandbox.root, 'nowhere'), target)
            _judge('sysfs: device_info', device_info.main, _device_info_args(world, sandbox), sandbox)
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['sysfs: device_info'])


def _text_mutation(data, text, label):
    how = data.draw(st.sampled_from(['cut', 'insert', 'replace', 'random']), label=label)
    if how == 'random':
        return data.draw(st.text(max_size=200), label=label + ' text')
    at = data.draw(st.integers(min_value=0, max_value=max(0, len(text) - 1)), label=label + ' at')
    if how == 'cut':
        return text[:at]
    piece = data.draw(st.one_of(st.text(max_size=20), st.sampled_from([
        '<', '>', '&', '"', "'", '=', '\n[', ']', '\x00', '<hostdev mode="subsystem" type="mdev">',
        '<address uuid="zzz"/>', '<vcpupin vcpu="x" cpuset="a-b"/>', 'enabled_mdev_types = ,,,\n',
        '[pci]\ndevice_spec = {"address": 5\n', 'cpu_dedicated_set = 9-1\n', '[mdev_x]\nmax_instances = -3\n',
        'device_spec = [1, 2]\n', 'report_in_placement = maybe\n'])), label=label + ' piece')
    if how == 'insert':
        return text[:at] + piece + text[at:]
    return text[:at] + piece + text[at + len(piece):]


def test_domain_xml(world, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world, with_host=True)
        try:
            xml = _text_mutation(data, world['domain_xml'], 'xml')
            path = sandbox.path(os.path.join(os.path.dirname(world['host']['domain_xml_glob']), 'zz-bad.xml'))
            with open(path, 'w', encoding='utf-8', errors='surrogatepass') as handle:
                handle.write(xml)
            _judge('domain XML: device_info', device_info.main, _device_info_args(world, sandbox), sandbox)
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['domain XML: device_info'])


def test_nova_conf(world, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world, with_host=True)
        try:
            text = _text_mutation(data, world['nova_conf_text'], 'nova.conf')
            with open(sandbox.path(world['host']['nova_conf']), 'w', encoding='utf-8', errors='surrogatepass') as handle:
                handle.write(text)
            _judge('nova.conf: device_info', device_info.main, _device_info_args(world, sandbox), sandbox)
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['nova.conf: device_info'])


# ---------------------------------------------------------------------------
# state files: snapshots and node records

def _write_json(path, doc):
    with open(path, 'w') as handle:
        json.dump(doc, handle, default=str, allow_nan=True)


@pytest.mark.parametrize('reader', ['rolled_back', 'verified', 'fleet_report'])
def test_snapshot_file(world, reader, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world)
        try:
            path = sandbox.path(world['snapshot_name'])
            latest = os.path.join(os.path.dirname(path), 'compute-02.latest.json')
            if data.draw(st.booleans(), label='garbage bytes'):
                with open(path, 'wb') as handle:
                    handle.write(data.draw(st.binary(max_size=64), label='bytes'))
            else:
                _write_json(path, mutate(data, world['snapshot_doc'], 'snapshot'))
            shutil.copy(path, latest)
            if reader == 'fleet_report':
                args = {'embedded_db': sandbox.db, 'dest': sandbox.path('report'), 'records': [world['records'][1]],
                        'hosts': [NODE, 'compute-02'], 'run_id': RUN_ID, 'snapshot_dir': os.path.dirname(path),
                        'latest_link': False}
                _judge('snapshot: fleet_report', fleet_report.main, args, sandbox, must_succeed=True)
                return
            args = {'embedded_db': sandbox.db, 'root_provider': 'compute-02', 'state': reader,
                    'snapshot_dir': os.path.dirname(path), 'nova_migrations': 'never',
                    'devices': dict(world['report'], hostname='compute-02')}
            _judge('snapshot: reshape %s' % reader, reshape.main, args, sandbox)
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['snapshot: fleet_report' if reader == 'fleet_report' else 'snapshot: reshape %s' % reader])


@pytest.mark.parametrize('where', ['given', 'stored'])
def test_node_records(world, where, record_property):
    @SETTINGS
    @given(data=st.data())
    def example(data):
        sandbox = Sandbox(world)
        try:
            records = [dict(r) for r in world['records']]
            index = data.draw(st.integers(min_value=0, max_value=len(records) - 1), label='record')
            bad = mutate(data, records[index], 'record')
            args = {'embedded_db': sandbox.db, 'dest': sandbox.path('report'), 'hosts': [NODE, 'compute-02'],
                    'run_id': RUN_ID, 'latest_link': False}
            if where == 'given':
                records[index] = bad
                args['records'] = records
            else:
                os.makedirs(sandbox.path('report/nodes'))
                good = dict(records[1 - index], run_id=RUN_ID)
                _write_json(sandbox.path('report/nodes/%s.json' % good['node']), good)
                if data.draw(st.booleans(), label='garbage bytes'):
                    with open(sandbox.path('report/nodes/%s.json' % records[index]['node']), 'wb') as handle:
                        handle.write(data.draw(st.binary(max_size=64), label='bytes'))
                else:
                    if isinstance(bad, dict):
                        bad['run_id'] = RUN_ID
                    _write_json(sandbox.path('report/nodes/%s.json' % records[index]['node']), bad)
                args['records'] = []
                args['read_trees'] = data.draw(st.booleans(), label='read trees')
            rc, result = _judge('records %s: fleet_report' % where, fleet_report.main, args, sandbox, must_succeed=True)
            assert rc == 0 and os.path.exists(sandbox.path('report/report.html'))
            nodes = [n['node'] for n in result['summary']['nodes']]
            assert NODE in nodes and 'compute-02' in nodes, nodes
        finally:
            sandbox.close()

    _run_and_record(example, record_property, ['records %s: fleet_report' % where])
