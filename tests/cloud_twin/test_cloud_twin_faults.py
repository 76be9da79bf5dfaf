# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's faults on the live cloud (issue 41, `make cloud-twin`; not in make test).

One control plane of this module's own (tests/cloud_twin/cloud.py: the cases restart its broker,
reload its Placement and pause its Keystone, so they do not share the session ``cloud`` of the
other files).  Each case makes two fresh nodes on nova-compute 33 (a ``pcpu`` node: legacy
vcpu_pin_set, its pinned guest's VCPU really become PCPU; a ``vgpu`` node: two T4 GPUs), boots a
guest on each through nova-api, and rolls them with ``playbooks/rolling_reshape.yml`` as the stage
does (nova steps on, the switch to nova 34's venv as the post hook), with a fault at a real point
of the roll, seen on the cloud (a node's nova-compute pid, Placement's request log, the roll's
snapshot folder), not after a guessed sleep:

1. a nova-compute that does not come back: the pcpu node's nova.conf is broken before the roll
   (``compute_driver`` names no driver: nova-compute 34 exits at its start); serial 1, failure
   budget ``rolling_reshape_max_fail_percentage`` 0: the roll stops at that node, which stays
   disabled and is named in the play's output and the report; the vgpu node is not reached
   (untouched); after the fix a rerun converges;
2. RabbitMQ restarted when the pcpu node's nova-compute 34 starts;
3. Placement's uWSGI reloaded when the pcpu node's snapshot of the run appears (right before its
   POST /reshaper);
4. Keystone down for 20 s (its uWSGI stopped, its socket kept) when the pcpu node's nova-compute
   33 has been stopped by the roll;
5. the controller (ansible-playbook's process group) SIGKILLed when Placement logged the pcpu
   node's POST /reshaper (204): the node is reshaped, disabled, nova-compute stopped, not switched.

In 2-5: nothing lost (every consumer's per-class totals are the same before and after, but for the
pinned guest's VCPU -> PCPU the roll makes), every node either done (nova 34, enabled and up, its
guests' allocations in the new layout) or untouched (nova 33, its tree as before), and a rerun
converges (every node done).  In 5 no node is left disabled without the report naming it.  Each
case prints when the fault hit, in seconds from the roll's start and after which task.
"""

import glob
import json
import os
import re
import signal
import time

import openstack
import openstack.config
import pytest

import cloud as cloud_mod
import novactl
import operator_run

pytestmark = [pytest.mark.real, pytest.mark.slow]

ROLL_TIMEOUT = 1500
SERVICE_TIMEOUT = 300
KEYSTONE_DOWN = 20.0


@pytest.fixture(scope='module')
def twin(request):
    own = cloud_mod.Cloud(cloud_mod.default_run_dir('-faults', env='CLOUD_TWIN_FAULTS_RUN_DIR'))
    request.addfinalizer(own.stop)
    began = time.monotonic()
    own.start()
    print('\nfaults: control plane up in %.1f s (%s)' % (time.monotonic() - began, own.run_dir))
    own.clouds_yaml(own.path('clouds.yaml'))
    return own


@pytest.fixture(scope='module')
def admin(twin):
    config = openstack.config.OpenStackConfig(config_files=[twin.path('clouds.yaml')])
    return openstack.connection.Connection(config=config.get_one('twin'))


@pytest.fixture(scope='module')
def flavors(admin):
    return {'pcpu': operator_run.flavor(admin, 'fault-pinned', vcpus=2, extra_specs={'hw:cpu_policy': 'dedicated'}),
            'vgpu': operator_run.flavor(admin, 'fault-vgpu', extra_specs={'resources:VGPU': '1'})}


class Case(object):
    """Two fresh nodes of one case, their guests and Placement before the roll."""

    def __init__(self, twin, admin, flavors, name):
        self.twin = twin
        self.name = name
        self.hosts = {'pcpu': 'f%s-a-pcpu' % name, 'vgpu': 'f%s-b-vgpu' % name}
        began = time.monotonic()
        self.made = operator_run.start_nodes(twin, sorted(self.hosts.items()),
                                             release='33', timeout=SERVICE_TIMEOUT)
        self.guests = {}
        for kind, host in sorted(self.hosts.items()):
            server, _took = operator_run.boot(admin, 'fault-%s-%s' % (name, kind), flavors[kind].id,
                                              cloud_mod.IMAGE_ID, host=host)
            server = admin.compute.get_server(server.id)
            assert server.status == 'ACTIVE' and server.compute_host == host, server
            self.guests[kind] = server.id
        self.setup_seconds = time.monotonic() - began
        self.before = operator_run.placement_state(twin)
        self.totals_before = operator_run.consumer_totals(self.before)
        pinned = self.guests['pcpu']
        assert 'VCPU' in self.totals_before[pinned] and 'PCPU' not in self.totals_before[pinned]
        # the one change of class the roll makes: the pinned guest's VCPU become PCPU
        self.expected = dict(self.totals_before)
        moved = dict(self.expected[pinned])
        moved['PCPU'] = moved.pop('VCPU')
        self.expected[pinned] = moved
        self.out = twin.path('faults', name)
        os.makedirs(self.out, exist_ok=True)
        self.inventory = operator_run.inventory(self.made, self.out)
        self.run_id = 'cloud-twin-fault-%s' % name
        self.pids33 = dict((host, novactl.pid_of(node)) for host, node in self.made.items())

    def variables(self, **extra):
        found = {'rolling_reshape_serial': 2, 'rolling_reshape_nova_expected_version': '34.0.0',
                 'rolling_reshape_nova_timeout': SERVICE_TIMEOUT, 'rolling_reshape_run_id': self.run_id}
        found.update(extra)
        return found

    # -- what a node is now ------------------------------------------------------
    def services(self):
        return dict((s['host'], s) for s in self.twin.services() if s['binary'] == 'nova-compute')

    def subtree(self, state, host):
        """{provider name: (inventories, allocations)} of the node's tree."""
        return dict((rp['name'], (rp['inventories'], rp['allocations'])) for rp in state.values()
                    if rp['name'] == host or rp['name'].startswith(host + '_'))

    def node_outcome(self, host, state, services):
        """'done', 'untouched' or a sentence saying why it is neither."""
        node = self.made[host]
        service = services.get(host, {})
        running = novactl.alive(novactl.pid_of(node))
        release = novactl.release_of(node)
        kind = [k for k, h in self.hosts.items() if h == host][0]
        guest = self.guests[kind]
        totals = operator_run.consumer_totals(state).get(guest)
        seen = 'nova %s %s, service %s/%s (%s), %s' % (
            release, 'running' if running else 'NOT running', service.get('status'), service.get('state'),
            service.get('disabled_reason'), totals)
        if (running and release == '34' and (service.get('status'), service.get('state')) == ('enabled', 'up')
                and totals == self.expected[guest]
                and novactl.installed_version(release) == '34.0.0'):
            return 'done', seen
        if (running and release == '33' and service.get('status') == 'enabled'
                and self.subtree(state, host) == self.subtree(self.before, host)):
            return 'untouched', seen
        return 'neither', seen

    def outcomes(self):
        state = operator_run.placement_state(self.twin)
        services = self.services()
        return dict((host, self.node_outcome(host, state, services)) for host in self.made), state

    def assert_nothing_lost(self, state):
        """Every consumer's per-class totals as before, or as the roll's VCPU -> PCPU makes them."""
        totals = operator_run.consumer_totals(state)
        assert set(totals) == set(self.totals_before), (sorted(set(totals) ^ set(self.totals_before)))
        for consumer, amounts in totals.items():
            assert amounts in (self.totals_before[consumer], self.expected[consumer]), (
                consumer, amounts, self.totals_before[consumer])

    def assert_converged(self, what):
        outcomes, state = self.outcomes()
        self.assert_nothing_lost(state)
        for host, (outcome, seen) in sorted(outcomes.items()):
            print('  %s after %s: %s (%s)' % (host, what, outcome, seen))
        assert set(o for o, _s in outcomes.values()) == {'done'}, outcomes
        assert operator_run.consumer_totals(state) == dict(
            (c, self.expected[c]) for c in operator_run.consumer_totals(state)), 'the totals of the roll'
        assert operator_run.consumer_providers(state, self.guests['pcpu'])['PCPU'] == [self.hosts['pcpu']]

    def stop(self):
        for node in self.made.values():
            novactl.stop(node)

    def report(self):
        """The run's report (summary.json) and its markdown."""
        folder = os.path.join(self.out, 'reports', self.run_id)
        with open(os.path.join(folder, 'summary.json')) as handle:
            summary = json.load(handle)
        with open(os.path.join(folder, 'report.md')) as handle:
            markdown = handle.read()
        return summary, markdown


class Roll(object):
    """A roll's ansible-playbook in its own session, its output timed line by line as it comes."""

    TASK = re.compile(r'^TASK \[(?P<task>.*)\]')

    def __init__(self, case, log_name, variables, env=None):
        self.case = case
        self.proc, self.log_path = operator_run.start_roll(case.out, case.inventory, case.twin.path('clouds.yaml'),
                                                           variables, log_name=log_name, env=env)
        self.began = time.monotonic()
        self.lines = []          # (seconds since start, line)
        self._offset = 0
        self._partial = ''

    def poll_log(self):
        with open(self.log_path, 'rb') as handle:
            handle.seek(self._offset)
            data = handle.read()
        self._offset += len(data)
        text = self._partial + data.decode('utf-8', 'replace')
        parts = text.split('\n')
        self._partial = parts.pop()
        now = time.monotonic() - self.began
        self.lines.extend((now, line) for line in parts)

    def last_task(self):
        for _t, line in reversed(self.lines):
            match = self.TASK.match(line)
            if match:
                return match.group('task')
        return '(no task yet)'

    def next_task_after(self, seconds):
        for when, line in self.lines:
            match = self.TASK.match(line)
            if when > seconds and match:
                return '%s (at %.1f s)' % (match.group('task'), when)
        return '(none)'

    def run(self, trigger=None, fault=None):
        """Wait for the end; when ``trigger()`` first returns a text, run ``fault()`` (returns its text).
        Returns {'rc', 'seconds', 'output', 'fault'}."""
        hit = None
        deadline = self.began + ROLL_TIMEOUT
        while self.proc.poll() is None:
            self.poll_log()
            if trigger is not None and hit is None:
                seen = trigger()
                if seen:
                    at = time.monotonic() - self.began
                    after = self.last_task()
                    done = fault()
                    hit = {'at': at, 'seen': seen, 'after_task': after, 'fault': done,
                           'took': time.monotonic() - self.began - at}
                    self.poll_log()
            if time.monotonic() > deadline:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)
                raise AssertionError('the roll did not end within %ss (%s)' % (ROLL_TIMEOUT, self.log_path))
            time.sleep(0.1)
        self.poll_log()
        with open(self.log_path) as handle:
            output = handle.read()
        if hit is not None:
            hit['next_task'] = self.next_task_after(hit['at'] + hit['took'])
        return {'rc': self.proc.returncode, 'seconds': time.monotonic() - self.began, 'output': output, 'fault': hit}


def _names(entries):
    return sorted(e['node'] if isinstance(e, dict) else str(e) for e in entries or [])


def _statuses(summary):
    return ', '.join('%s %s' % (n['node'], n['status']) for n in summary.get('nodes', []))


def _say_fault(case, result):
    hit = result['fault']
    assert hit is not None, 'the fault never hit: its trigger was not seen during the roll'
    print('  fault: %s at %.1f s into the roll (%s), during/after task "%s"; it took %.1f s; the next task: %s'
          % (hit['fault'], hit['at'], hit['seen'], hit['after_task'], hit['took'], hit['next_task']))


def _say_roll(case, what, result):
    print('  %s: rc %d in %.1f s (%s)' % (what, result['rc'], result['seconds'],
                                          os.path.relpath(os.path.join(case.out), case.twin.run_dir)))


# -- triggers: real points of the roll, seen on the cloud ----------------------------
def _nova33_stopped(case, host):
    def trigger():
        pid = case.pids33[host]
        if not novactl.alive(pid):
            return 'nova-compute 33 of %s (pid %d) stopped' % (host, pid)
        return None
    return trigger


def _nova34_started(case, host):
    node = case.made[host]

    def trigger():
        pid = novactl.pid_of(node)
        if pid and pid != case.pids33[host] and novactl.alive(pid) and novactl.release_of(node) == '34':
            return 'nova-compute 34 of %s started (pid %d)' % (host, pid)
        return None
    return trigger


def _snapshot_written(case, host):
    pattern = os.path.join(case.out, 'snapshots', '%s.2*.json' % host)

    def trigger():
        found = glob.glob(pattern)
        if found:
            return 'the snapshot of %s appeared (%s)' % (host, os.path.basename(found[0]))
        return None
    return trigger


def _reshaped_in_placement(case, offset):
    def trigger():
        for request in case.twin.placement_requests(user='operator', since=offset, writes_only=True):
            if request['method'] == 'POST' and request['uri'].startswith('/reshaper') and request['status'] == 204:
                return "Placement logged the operator's POST /reshaper 204"
        return None
    return trigger


def _rerun_converges(case, figures):
    result = Roll(case, 'rerun.log', case.variables()).run()
    _say_roll(case, 'rerun', result)
    figures['rerun (s)'] = result['seconds']
    assert result['rc'] == 0, result['output'][-6000:]
    case.assert_converged('the rerun')
    return result


def _print_figures(case, figures):
    figures['nodes up and guests booted (s)'] = case.setup_seconds
    print('  figures of case %s: %s' % (case.name, ', '.join('%s %.1f' % kv for kv in sorted(figures.items()))))


def _fault_case(twin, admin, flavors, name, make_trigger, fault):
    """Cases 2-4: a fault at a real point of the roll; nothing lost, every node done or untouched, the rerun converges."""
    began = time.monotonic()
    case = Case(twin, admin, flavors, name)
    figures = {}
    try:
        offset = twin.placement_log_size()
        roll = Roll(case, 'roll.log', case.variables())
        result = roll.run(make_trigger(case), fault)
        answers = {}
        for request in twin.placement_requests(since=offset):
            answers[request['status']] = answers.get(request['status'], 0) + 1
        print("  Placement's answers during the roll (its request log, every user): %s" % ', '.join(
            '%d x %d' % (n, status) for status, n in sorted(answers.items())))
        figures['roll with the fault (s)'] = result['seconds']
        _say_roll(case, 'roll with the fault', result)
        _say_fault(case, result)
        outcomes, state = case.outcomes()
        for host, (outcome, seen) in sorted(outcomes.items()):
            print('  %s after the faulted roll: %s (%s)' % (host, outcome, seen))
        case.assert_nothing_lost(state)
        if result['rc'] == 0:
            assert set(o for o, _s in outcomes.values()) == {'done'}, outcomes
        else:
            print('  the faulted roll failed: %s' % [line for line in result['output'].splitlines()
                                                     if 'The roll stops at' in line or 'FAILED' in line][:4])
            summary, _md = case.report()
            named = _names(summary['failed'])
            print('  the report: failed %s; %s' % (named, _statuses(summary)))
            for host, (outcome, seen) in outcomes.items():
                # a node neither done nor untouched is one the roll failed: the report names it
                assert outcome in ('done', 'untouched') or host in named, (host, outcome, seen, named)
        _rerun_converges(case, figures)
    finally:
        case.stop()
    figures['case (s)'] = time.monotonic() - began
    _print_figures(case, figures)


# -- the cases ------------------------------------------------------------------------
def test_fault_nova_compute_does_not_come_back(twin, admin, flavors):
    began = time.monotonic()
    case = Case(twin, admin, flavors, '1')
    figures = {}
    bad, good = case.hosts['pcpu'], case.hosts['vgpu']
    conf = os.path.join(case.made[bad], 'node.conf')
    with open(conf) as handle:
        original = handle.read()
    try:
        # the new release's configuration laid with a mistake: nova-compute 33 runs on (it read its
        # configuration at its start), nova-compute 34 exits at its start ("no such driver")
        assert 'compute_driver = libvirt.LibvirtDriver' in original
        with open(conf, 'w') as handle:
            handle.write(original.replace('compute_driver = libvirt.LibvirtDriver',
                                          'compute_driver = libvirt.NoSuchDriver'))
        result = Roll(case, 'roll.log', case.variables(rolling_reshape_serial=1,
                                                       rolling_reshape_max_fail_percentage=0)).run()
        _say_roll(case, 'roll with the broken node', result)
        figures['roll that stops (s)'] = result['seconds']
        output = result['output']
        assert result['rc'] != 0, output[-6000:]
        stops = [line for line in output.splitlines() if 'The roll stops at %s' % bad in line]
        assert stops, output[-6000:]
        said = ' '.join(output.split())
        left = 'nova-compute of %s is left disabled in nova: enable it once the node is fixed.' % bad
        assert left in said, output[-6000:]
        print('  play output: %s ... %s' % (stops[0].strip()[:160], left))
        outcomes, state = case.outcomes()
        for host, (outcome, seen) in sorted(outcomes.items()):
            print('  %s after the stopped roll: %s (%s)' % (host, outcome, seen))
        case.assert_nothing_lost(state)
        services = case.services()
        assert services[bad]['status'] == 'disabled', services[bad]
        assert not novactl.alive(novactl.pid_of(case.made[bad]))
        assert outcomes[good][0] == 'untouched', outcomes[good]
        summary, markdown = case.report()
        assert bad in markdown and good in markdown
        failed, unreached = _names(summary['failed']), _names(summary['unreached'])
        print('  the report: failed %s, not reached %s; %s' % (failed, unreached, _statuses(summary)))
        assert failed == [bad], summary['failed']
        assert unreached == [good], summary['unreached']
        # the fix, then the rerun
        with open(conf, 'w') as handle:
            handle.write(original)
        _rerun_converges(case, figures)
    finally:
        with open(conf, 'w') as handle:
            handle.write(original)
        case.stop()
    figures['case (s)'] = time.monotonic() - began
    _print_figures(case, figures)


def test_fault_rabbitmq_restarted_mid_roll(twin, admin, flavors):
    def fault():
        began = time.monotonic()
        twin.broker.restart()
        return 'RabbitMQ restarted (%.1f s)' % (time.monotonic() - began)
    _fault_case(twin, admin, flavors, '2', lambda case: _nova34_started(case, case.hosts['pcpu']), fault)


def test_fault_placement_reloaded_mid_roll(twin, admin, flavors):
    def fault():
        took = twin.placement.reload()
        return "Placement's uWSGI reloaded (SIGHUP, answering again after %.1f s)" % took
    _fault_case(twin, admin, flavors, '3', lambda case: _snapshot_written(case, case.hosts['pcpu']), fault)


def test_fault_keystone_down_mid_roll(twin, admin, flavors):
    def fault():
        began = time.monotonic()
        twin.keystone.pause()
        time.sleep(KEYSTONE_DOWN)
        twin.keystone.resume()
        return 'Keystone down %.1f s, answering again after %.1f s' % (KEYSTONE_DOWN, time.monotonic() - began)
    _fault_case(twin, admin, flavors, '4', lambda case: _nova33_stopped(case, case.hosts['pcpu']), fault)


def test_fault_controller_killed_mid_batch(twin, admin, flavors):
    began = time.monotonic()
    case = Case(twin, admin, flavors, '5')
    figures = {}
    try:
        roll = Roll(case, 'roll.log', case.variables())
        offset = twin.placement_log_size()

        def kill():
            os.killpg(roll.proc.pid, signal.SIGKILL)
            return 'ansible-playbook (pid %d) and its process group SIGKILLed' % roll.proc.pid
        result = roll.run(_reshaped_in_placement(case, offset), kill)
        figures['killed roll (s)'] = result['seconds']
        _say_roll(case, 'killed roll', result)
        _say_fault(case, result)
        assert result['rc'] == -signal.SIGKILL, result['rc']
        time.sleep(2)
        outcomes, state = case.outcomes()
        for host, (outcome, seen) in sorted(outcomes.items()):
            print('  %s after the kill: %s (%s)' % (host, outcome, seen))
        case.assert_nothing_lost(state)
        rerun = _rerun_converges(case, figures)
        # no node left disabled without the report naming it: after the rerun none is disabled, and
        # the rerun's report names every node of the roll
        summary, markdown = case.report()
        for host in case.made:
            assert host in markdown, host
        # every node the killed run left disabled is named by the rerun's report, saying so
        brought_back = [n['node'] for n in summary['nodes']
                        if n['reason'].startswith('nova-compute brought back into service')]
        left = [h for h, (_o, seen) in outcomes.items() if 'disabled' in seen]
        print('  left disabled by the killed run: %s; named as brought back by the rerun\'s report: %s'
              % (sorted(left), sorted(brought_back)))
        assert left and sorted(brought_back) == sorted(left), (left, summary['nodes'])
        services = case.services()
        disabled = [h for h in case.made if services[h]['status'] == 'disabled']
        assert not disabled, disabled
        print('  the rerun\'s report: %s' % _statuses(summary))
        assert 'rolling_progress' in rerun['output']
    finally:
        case.stop()
    figures['case (s)'] = time.monotonic() - began
    _print_figures(case, figures)
