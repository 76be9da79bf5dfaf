# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling role's nova steps end to end against nova 34 (issue 14, items 1 and 5).

In this test process (nova 34.0.0's functional harness, see test_nova_accepts.py):

* nova's API (the harness' ``OSAPIFixture`` app: nova's own WSGI pipeline and os-services code)
  and Placement 16 (the harness' Placement app and database) are SERVED OVER REAL HTTP on
  127.0.0.1 with ``wsgiref`` (the functional tests are eventlet monkey-patched, so the server
  threads are green threads, like the services' own);
* a compute service ``cmp-e2e`` runs nova's libvirt driver on fakelibvirt with two vGPU-capable
  GPUs (fakehost.default_gpu_host), as a pre-upgrade nova left it: VGPU on the root and the
  guests' VGPU allocations on the root;
* a control endpoint on 127.0.0.1 stops and starts that compute service, and says its version:
  the node's "service manager", driven by ``tests/nova_oracle/novactl.py`` which the role runs
  on the node as rolling_reshape_nova_stop_command / _start_command / _version_command.  The
  service started by the test before the roll stands for the pre-upgrade nova-compute and
  reports 33.0.0; the one the role starts is nova 34's and reports
  ``nova.version.version_string()`` (34.0.0, what ``nova-compute --version`` prints).  Starting
  lifts the pre-upgrade overrides (the node's nova.conf applies in full) and starts a NEW
  nova-compute service (a new ComputeManager: its start-up ``update_available_resource`` calls
  the driver's ``update_provider_tree``).

Then ``ansible-playbook`` from the project venv runs playbooks/rolling_reshape.yml on a one-node
local-connection inventory: discovery from the fake host's sysfs / domain XML / nova.conf, the
REST backend on the served Placement (``auth_type: admin_token``), nova's compute endpoint
``rolling_reshape_compute_endpoint`` on the served nova API, ``rolling_reshape_nova_service:
always``, ``rolling_reshape_nova_force_down: true``.

Auth: nova's harness stubs keystonemiddleware and builds the request context from
``X-Auth-User`` / ``X-Auth-Project-Id`` / ``X-Roles`` headers, which our modules do not send
(nova 34 has no noauth2 pipeline any more).  The served nova app sits behind
:class:`TokenToHeaders`, a stand-in for keystonemiddleware's auth_token: the token the modules
send with ``admin_token`` auth (``admin``) becomes nova's admin user in the harness' project with
roles reader,member,admin (as Keystone would expand them); any other token is 401.  Nothing in
the collection changed for the test.

Production's auth (cases 4 and 5): a REAL Keystone (tests/nova_oracle/real_keystone.py starts
tests/keystone_server.py --keystone-only from the project venv) hashing passwords with bcrypt at
12 rounds, as a production Keystone does; the modules authenticate by password
(``placement_backend``: ``auth_type: password``, ``region_name: RegionOne``) through a counting
proxy in front of Keystone (every token Keystone issues them is counted and timed), and find
Placement and nova (no ``rolling_reshape_compute_endpoint``) in Keystone's catalog; nova's
TokenToHeaders and a wrapper of the served Placement validate every token with Keystone as
keystonemiddleware does (``GET /v3/auth/tokens``, a valid token cached 300 s).

Cases:

1. the roll succeeds: nova's os-services went enabled/up -> disabled -> down -> up -> enabled
   (every GET of the node's record and every PUT the role sent are recorded), the restarted
   nova-compute made ZERO writes to Placement and its start-up pass ran cleanly, the tree is
   reshaped (VGPU on the two pGPU children, the guests' VGPU allocations moved there, nova's
   own fresh layout is the same tree), and the report (and the callback) says
   nova-compute 33.0.0 -> 34.0.0;
2. a nova-compute that writes to the tree when it comes back (its nova.conf now reserves host
   memory, so it rewrites the root's MEMORY_MB inventory) FAILS the node: the roll stops naming
   the provider whose generation moved, and nova-compute is left disabled in nova;
3. a new nova-compute that is not rolling_reshape_nova_expected_version fails the node before it
   is enabled: left disabled (running), the reason names both versions;
4. case 1 (restart, force_down on, the role's default polling) with production's auth: the roll
   succeeds as in case 1, every request to nova and Placement carried a token Keystone issued
   during the roll and validated; it prints issue 31's figures and what the tokens cost (issued
   during the roll and between the disable and the enable, Keystone's seconds issuing them);
5. case 4 with ``PLACEMENT_UPGRADE_TOKEN_SHARING=off`` in ansible-playbook's environment (the
   shared token cache's off switch); the second of 4 and 5 to run prints both side by side.
   (No timing is asserted.)  Figures: ``.ci/nova-oracle.sh -k keystone_password_auth -s``.
"""

import datetime
import gc
import glob
import io
import json
import os
import sys
import threading
import time
import traceback
from wsgiref import simple_server

from socketserver import ThreadingMixIn

import fixtures
from oslo_config import cfg

import fakehost
import playbook
import real_keystone
from test_nova_accepts import OracleTestBase

CONF = cfg.CONF
HERE = os.path.dirname(os.path.abspath(__file__))
HOST = 'cmp-e2e'
OLD_VERSION = '33.0.0'
RUN_ID = 'e2e-nova34'
# bcrypt rounds of the real Keystone of the password-auth cases: 12, what a production Keystone
# uses (keystone/conf/identity.py ``password_hash_rounds``: "The default for bcrypt is 12";
# keystone/common/password_hashers/bcrypt.py hashes with rounds=12 when it is unset; see
# tests/keystone_server.py PRODUCTION_HASH_ROUNDS): a password check costs ~0.24 s here
KEYSTONE_ROUNDS = 12
# the password-auth cases' figures, by case, so that the second to run prints both side by side
KEYSTONE_FIGURES = {}


class _Server(ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):  # the harness' logging captures what matters
        pass


class TokenToHeaders(object):
    """keystonemiddleware's part in front of the harness' nova API: a token the modules send
    becomes the headers the harness' stubbed context middleware reads; every GET of the node's
    os-services record and every PUT is recorded with nova's answer (status, state).

    ``tokens``: the fixed tokens ({token: (user, roles)}, the harness' project).  ``validator``
    (a real_keystone.TokenValidator): any other token is validated with a real Keystone, as
    keystonemiddleware does (cached), and becomes its user, project and roles.  ``checked``:
    (method, path, 'fixed' | 'validated' | 'refused' | 'none') of every request."""

    def __init__(self, app, project_id, tokens, seen, times=None, updated=None, validator=None):
        self.app = app
        self.project_id = project_id
        self.tokens = tokens
        self.seen = seen
        # when each recorded request was answered (time.time()), in step with ``seen``
        self.times = times if times is not None else []
        # the record's updated_at in each answer (nova's clock, UTC), in step with ``seen``
        self.updated = updated if updated is not None else []
        self.validator = validator
        self.checked = []

    def __call__(self, environ, start_response):
        token = environ.get('HTTP_X_AUTH_TOKEN')
        user = self.tokens.get(token)
        project_id, how = self.project_id, 'fixed'
        path = environ.get('PATH_INFO', '')
        method = environ.get('REQUEST_METHOD')
        if user is None and self.validator is not None and path not in ('', '/'):
            for key in real_keystone.IDENTITY_HEADERS:
                environ.pop(key, None)
            info = self.validator.check(token)
            if info is not None:
                user, project_id, how = (info['user_id'], ','.join(info['roles'])), info['project_id'], 'validated'
        if user is None and path not in ('', '/'):
            self.checked.append((method, path, 'refused'))
            return real_keystone.unauthorized(start_response)
        self.checked.append((method, path, how if user is not None else 'none'))
        if user is not None:
            environ.update({'HTTP_X_AUTH_USER': user[0], 'HTTP_X_USER_ID': user[0],
                            'HTTP_X_AUTH_PROJECT_ID': project_id, 'HTTP_X_ROLES': user[1]})
        body = b''
        if method == 'PUT':
            length = int(environ.get('CONTENT_LENGTH') or 0)
            body = environ['wsgi.input'].read(length) if length else b''
            environ['wsgi.input'] = io.BytesIO(body)
        status = []

        def start(code, headers, exc_info=None):
            status.append(code)
            return start_response(code, headers, exc_info)

        chunks = list(self.app(environ, start))
        if '/os-services' in path and (method == 'PUT' or 'host=%s' % HOST in environ.get('QUERY_STRING', '')):
            try:
                answer = json.loads(b''.join(chunks).decode('utf-8'))
                record = answer['service'] if method == 'PUT' else answer['services'][0]
                view = (record['status'], record['state'])
                stamp = record.get('updated_at')
            except (ValueError, KeyError, IndexError):
                view = stamp = None
            sent = json.loads(body.decode('utf-8') or '{}') if method == 'PUT' else None
            self.seen.append((method, sent, status[0], view))
            self.times.append(time.time())
            self.updated.append(stamp)
        return chunks


class TestRollingReshapeWithNova(OracleTestBase):
    """ansible-playbook rolls one node whose nova-compute is nova 34's, over real HTTP."""

    def setUp(self):
        super().setUp()
        if playbook.missing():
            self.fail(playbook.missing())
        self.seen = []
        self.seen_times = []
        self.seen_updated = []
        self.control_times = []
        self.writes_at_start = None
        self.writes_after_start = None
        self.versions = {}
        self.control_log = []
        self.on_start = None
        self.nova_writes = []
        self.record_novas_writes()

    def record_novas_writes(self):
        """When the node's nova-compute writes its service record, on nova's side (time.time(), as the
        control calls are timed): its heartbeats (the service group's report) and the service
        version it saves at its start.  Writes the roll's reads would not see (one overwritten
        before the next read) are here too."""
        from nova import service as nova_service
        from nova.servicegroup.drivers import db as sg_db
        report, update = sg_db.DbDriver._report_state, nova_service._update_service_ref

        def _report_state(driver, service):
            result = report(driver, service)
            if getattr(service, 'host', None) == HOST:
                self.nova_writes.append((time.time(), 'heartbeat'))
            return result

        def _update_service_ref(service):
            version = service.version
            result = update(service)
            if service.host == HOST and service.version != version:
                self.nova_writes.append((time.time(), 'version saved'))
            return result
        self.useFixture(fixtures.MonkeyPatch('nova.servicegroup.drivers.db.DbDriver._report_state', _report_state))
        self.useFixture(fixtures.MonkeyPatch('nova.service._update_service_ref', _update_service_ref))

    # ------------------------------------------------------------ serving
    def serve(self, app):
        server = simple_server.make_server('127.0.0.1', 0, app, server_class=_Server, handler_class=_QuietHandler)
        thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.1})
        thread.daemon = True
        thread.start()

        def stop():
            server.shutdown()
            server.server_close()
        self.addCleanup(stop)
        return 'http://127.0.0.1:%d' % server.server_address[1]

    def placement_app(self):
        """The harness' Placement WSGI app (the one its wsgi-intercept serves)."""
        import wsgi_intercept
        from urllib.parse import urlparse
        where = urlparse(self.placement_fixture.endpoint)
        app_fn, _script = wsgi_intercept._wsgi_intercept[(where.hostname, where.port or 80)]
        return app_fn()

    def control_app(self, environ, start_response):
        """POST /stop|start|version/<host>: the node's service manager, in this process."""
        parts = environ.get('PATH_INFO', '').strip('/').split('/')
        try:
            action, host = parts
            self.control_log.append(action)
            begun = time.time()
            text = getattr(self, '_control_' + action)(host)
            self.control_times.append((action, begun, time.time()))
            code = '200 OK'
        except Exception as exc:  # the node-side command prints it and fails
            text = '%s: %s\n%s' % (type(exc).__name__, exc, traceback.format_exc())
            code = '500 Internal Server Error'
        start_response(code, [('Content-Type', 'text/plain')])
        return [text.encode('utf-8')]

    def _control_stop(self, host):
        compute = self.computes.pop(host)
        self.compute_rp_uuids.pop(host)
        self.stopped = (compute.host, self.host_mappings[compute.host].cell_mapping.name,
                        compute.manager.driver._get_connection())
        compute.stop()
        return 'stopped %s' % host

    def _control_start(self, host):
        name, cell_name, connection = self.stopped
        self.assertEqual(host, name)
        # the new nova-compute: the node's nova.conf in full (what restart_new_nova lifts)
        CONF.clear_override('enabled_mdev_types', group='devices')
        CONF.clear_override('report_in_placement', group='pci')
        if self.on_start:
            self.on_start()
        self.restart_mark = len(self.stdlog.logger.output)
        self.recording = []
        self.start_compute(host, cell_name=cell_name, connection=connection)
        self.compute = self.computes[host]
        # the start-up pass (update_available_resource, startup=True) ran inside start_compute
        self.writes_at_start = list(self.recording)
        self.writes_after_start = self.recording      # and what nova writes later on
        from nova import version
        self.versions[host] = version.version_string()
        return 'started %s' % host

    def _control_version(self, host):
        return self.versions[host]

    # ------------------------------------------------------------ the roll
    def roll(self, keystone_rounds=None, env=None, **extra):
        """Build the node, serve nova, Placement and the control endpoint, and run the rolling
        playbook; returns its rc.  ``keystone_rounds``: authenticate with a real Keystone (bcrypt
        with that many rounds) by password, nova found in its catalog (see keystone_roll);
        ``env``: more environment for ansible-playbook."""
        self.keystone = None
        placement_app = self.placement_app()
        if keystone_rounds:
            # keystonemiddleware's part in front of both, each service with its own cache
            self.placement_auth = real_keystone.PlacementAuth(placement_app, real_keystone.TokenValidator('placement'))
            placement_app = self.placement_auth
        placement_url = self.serve(placement_app)
        self.nova_auth = TokenToHeaders(self.api_fixture.app(), self.api_fixture.project_id,
                                        {} if keystone_rounds else {'admin': ('admin', 'reader,member,admin')},
                                        self.seen, self.seen_times, self.seen_updated,
                                        validator=real_keystone.TokenValidator('nova') if keystone_rounds else None)
        nova_url = self.serve(self.nova_auth)
        if keystone_rounds:
            # started now, it comes up while the harness builds the node (~4 s)
            self.keystone = real_keystone.KeystoneProcess(os.path.join(self.workdir, 'keystone'), keystone_rounds,
                                                          {'placement': placement_url, 'compute': nova_url + '/v2.1'})
            self.addCleanup(self.keystone.stop)
        self.build(fakehost.default_gpu_host(name=HOST))
        self.start_old_nova()
        self.seed_legacy()
        self.versions[HOST] = OLD_VERSION
        self.flat = self.dump()
        control_port = int(self.serve(self.control_app).rsplit(':', 1)[1])

        def novactl(action):
            # -I -S: the client starts in about 0.02 s (see novactl.py)
            return [sys.executable, '-I', '-S', os.path.join(HERE, 'novactl.py'), action, HOST, '--port', str(control_port)]

        out = os.path.join(self.workdir, 'out')
        os.makedirs(out)
        variables = {
            'placement_backend': {'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': placement_url}},
            'rolling_reshape_compute_endpoint': nova_url + '/v2.1',
            'rolling_reshape_nova_service': 'always',
            'rolling_reshape_nova_force_down': True,
            'rolling_reshape_nova_timeout': 90,
            'rolling_reshape_nova_stop_command': novactl('stop'),
            'rolling_reshape_nova_start_command': novactl('start'),
            'rolling_reshape_nova_version_command': novactl('version'),
            'rolling_reshape_become': False,
            'rolling_reshape_sysfs_root': self.built['sysfs_root'],
            'rolling_reshape_domain_xml_glob': self.built['domain_xml_glob'],
            'rolling_reshape_nova_conf': self.built['nova_conf'],
            'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
            'rolling_reshape_report_dir': os.path.join(out, 'reports'),
            'rolling_reshape_run_id': RUN_ID,
        }
        if self.keystone is not None:
            state = self.keystone.wait()
            for validator in (self.placement_auth.validator, self.nova_auth.validator):
                validator.connect(state['auth_url'], state['auth'])     # their own service tokens
            # the modules authenticate through the counting proxy: the tokens Keystone issues them
            self.keystone_proxy = real_keystone.CountingProxy(state['auth_url'])
            auth = dict(state['auth'], auth_url=self.serve(self.keystone_proxy) + '/v3')
            variables['placement_backend'] = {'auth_type': 'password', 'auth': auth, 'region_name': state['region_name']}
            del variables['rolling_reshape_compute_endpoint']       # nova found in Keystone's catalog
        variables.update(extra)
        # This process holds nova, Placement, their fixtures and the compute service: a full (gen-2)
        # collection of its heap takes 0.2-0.25 s here and stalls whichever request the served
        # Placement or nova is answering (seen with gc.callbacks: a request of the reshape's
        # verification read answered 0.24-0.25 s late while such a collection ran).  A service
        # process of a real cloud carries no such heap: what the set-up built is moved out of the
        # collector's way (gc.freeze) for the roll, so that the figures time the roll, not this
        # harness.  New objects are still collected.
        gc.collect()
        gc.freeze()
        self.addCleanup(gc.unfreeze)
        self.roll_began = time.time()
        proc = playbook.run_roll(out, HOST, variables, env=env)
        self.roll_ended = time.time()
        self.output = proc.stdout
        # ansible-core wraps long error messages: compare with the whitespace collapsed
        self.said = ' '.join(proc.stdout.split())
        summaries = glob.glob(os.path.join(out, 'reports', RUN_ID, 'summary.json'))
        self.summary = None
        if summaries:
            with open(summaries[0]) as handle:
                self.summary = json.load(handle)
        return proc.returncode

    def node_summary(self):
        self.assertIsNotNone(self.summary, self.output)
        return [n for n in self.summary['nodes'] if n['node'] == HOST][0]

    def states(self):
        """nova's record of the node (status, state) as nova answered the role, repeats merged."""
        out = []
        for _kind, _sent, _status, view in self.seen:
            if view and (not out or out[-1] != view):
                out.append(view)
        return out

    def puts(self):
        return [sent for kind, sent, _status, _view in self.seen if kind == 'PUT']

    def cycle_figures(self):
        """issue 31's figures of this node, seconds: nova-compute's downtime (the disable PUT to
        the enable PUT), nova's own stop and start (the service manager's calls: here nova's
        ComputeManager stopping, and starting with its start-up pass), the new nova-compute's first
        write after its start (``nova_first_write``: from the start's end; a version saved inside
        the start is 0) and, with forced_down, the wait for its next write (``second_write``, from
        the later of the first write and the start's end), both timed on nova's side (its
        heartbeats and its version save, record_novas_writes), and what the roll added beyond all
        of that (``added``: its tasks and its polling, and a later write it waited for when it
        cleared too late to use the next one).

        With forced_down the roll needs two writes of the new nova-compute (nova's os-services
        cannot tell a version saved at the start from a heartbeat: nova/services.py
        clear_forced_down_when_up).  On an upgrade the second is the first heartbeat, after the
        start-up pass, which any roll must wait for; on a restart without a version change it is
        the next heartbeat, report_interval later, which only that protocol waits for: it is
        printed apart.  ``added_first_reaction`` is Run I's measure (nova's stamps the roll read:
        the start's end to the first write, plus the clearing PUT to the next), which also counted
        the roll's reaction to the first write, off the critical path."""
        puts = [(sent, when) for (kind, sent, _status, _view), when in zip(self.seen, self.seen_times)
                if kind == 'PUT']
        disabled = [when for sent, when in puts if sent.get('status') == 'disabled'][0]
        enabled = [when for sent, when in puts if sent.get('status') == 'enabled'][-1]
        own = sum(end - begun for action, begun, end in self.control_times if action in ('stop', 'start'))
        start_begun, start_end = [(begun, end) for action, begun, end in self.control_times if action == 'start'][-1]
        epoch = self.epoch
        writes = sorted(set(epoch(u) for u in self.seen_updated if u))
        cleared = [epoch(u) for (kind, sent, _s, _v), u in zip(self.seen, self.seen_updated)
                   if kind == 'PUT' and sent == {'forced_down': False} and u]
        earlier = 0.0
        first = [w for w in writes if w > start_begun]
        if first:
            earlier += max(0.0, first[0] - start_end)
        if cleared:
            beat = [w for w in writes if w > cleared[-1]]
            if beat:
                earlier += beat[0] - cleared[-1]
        novas = sorted(when for when, _kind in self.nova_writes if when > start_begun)
        first_write = max(0.0, novas[0] - start_end) if novas else 0.0
        second_write = 0.0
        if cleared and len(novas) > 1:
            second_write = novas[1] - max(novas[0], start_end)
        downtime = enabled - disabled
        return {'downtime': downtime, 'nova_stop_start': own, 'nova_first_write': first_write,
                'second_write': second_write, 'nova_reports': first_write + second_write,
                'added': downtime - own - first_write - second_write,
                'added_first_reaction': downtime - own - earlier, 'nova_requests': len(self.seen),
                'writes': [(round(when - start_end, 2), kind) for when, kind in sorted(self.nova_writes)
                           if when > start_begun]}

    def assert_waited_for_two_writes(self):
        """forced_down cleared only after the new nova-compute's first write (as nova timed it), and
        the node enabled only after its second (a heartbeat, after its start-up pass)."""
        start_begun = [begun for action, begun, _end in self.control_times if action == 'start'][-1]
        novas = sorted(when for when, _kind in self.nova_writes if when > start_begun)
        self.assertGreaterEqual(len(novas), 2, self.nova_writes)
        put_times = [(sent, when) for (kind, sent, _s, _v), when in zip(self.seen, self.seen_times) if kind == 'PUT']
        cleared = [when for sent, when in put_times if sent == {'forced_down': False}][-1]
        enabled = [when for sent, when in put_times if sent == {'status': 'enabled'}][-1]
        self.assertGreater(cleared, novas[0], (cleared, self.nova_writes))
        self.assertGreater(enabled, novas[1], (enabled, self.nova_writes))

    def said_cycle(self, case, figures):
        print('nova-cycle on nova 34 (force_down on, %s): downtime %.2f s, nova\'s own stop and start %.2f s, '
              'the new nova-compute\'s first write %.2f s after its start and the wait for its next %.2f s '
              '(its writes after the start\'s end, s: %s), added by the roll %.2f s (%.2f s as Run I measured it), '
              '%d requests to nova'
              % (case, figures['downtime'], figures['nova_stop_start'], figures['nova_first_write'],
                 figures['second_write'], ', '.join('%s %s' % (kind, when) for when, kind in figures['writes']),
                 figures['added'], figures['added_first_reaction'], figures['nova_requests']))

    def novas_view(self):
        return self.admin_api.get_services(binary='nova-compute', host=HOST)[0]

    # ------------------------------------------------------------ cases
    def test_the_roll_takes_nova_compute_out_and_back_and_nova_writes_nothing(self):
        # issue 31's figures for another polling: PLACEMENT_UPGRADE_E2E_POLL_INTERVAL=0.25 (seconds)
        poll = os.environ.get('PLACEMENT_UPGRADE_E2E_POLL_INTERVAL')
        extra = {'rolling_reshape_nova_poll_interval': float(poll)} if poll else {}
        rc = self.roll(rolling_reshape_nova_expected_version='34.0.0', **extra)
        self.assertEqual(0, rc, self.output)
        self.assertEqual(['stop', 'start'], [a for a in self.control_log if a != 'version'])
        # os-services: disabled, stopped and seen down, started and seen up, enabled
        self.assertEqual([('enabled', 'up'), ('disabled', 'up'), ('disabled', 'down'), ('disabled', 'up'),
                          ('enabled', 'up')], self.states(), self.seen)
        puts = self.puts()
        self.assertEqual(4, len(puts), puts)
        self.assertEqual('disabled', puts[0]['status'])
        self.assertIn('placement.upgrade %s' % RUN_ID, puts[0]['disabled_reason'])
        self.assertEqual([{'forced_down': True}, {'forced_down': False}, {'status': 'enabled'}], puts[1:])
        self.assertTrue(all(status.startswith('200') for _k, _b, status, _v in self.seen), self.seen)
        view = self.novas_view()
        self.assertEqual(('enabled', 'up', False), (view['status'], view['state'], view['forced_down']))
        # the new nova-compute ran its start-up pass and wrote nothing; afterwards nova wrote only
        # the root's traits, when the role enabled it (COMPUTE_STATUS_DISABLED off the root)
        self.assertEqual([], self.writes_at_start)
        self.assert_started_cleanly(self.restart_mark)
        self.assertLessEqual(set(self.writes_after_start), {'PUT /resource_providers/%s/traits' % self.root_uuid})
        # the tree: VGPU off the root, on the two pGPU children, the guests' VGPU moved there
        after = self.dump()
        root = after['providers'][HOST]
        self.assertIn('VGPU', self.flat['providers'][HOST]['inventories'])
        self.assertNotIn('VGPU', root['inventories'])
        children = self.tree(after)
        self.assertEqual({HOST + '_pci_0000_84_00_0', HOST + '_pci_0000_85_00_0'}, set(children))
        child_uuids = set(after['providers'][name]['uuid'] for name in children)
        vgpu = {}
        for name, consumer in self.consumers.items():
            allocations = after['consumers'][consumer]['allocations']
            self.assertNotIn('VGPU', allocations[self.root_uuid])
            vgpu[name] = sum(res.get('VGPU', 0) for rp, res in allocations.items() if rp in child_uuids)
        self.assertEqual({'instance-00000001': 2, 'instance-00000002': 2, 'instance-00000003': 1}, vgpu)
        self.assert_same_tree_as_novas(after)
        # the report (and the progress callback) say which nova-compute ran before and after
        node = self.node_summary()
        self.assertEqual('reshaped', node['status'])
        self.assertEqual({'before': OLD_VERSION, 'after': '34.0.0'}, node['nova_compute'])
        self.assertIn('[rolling_progress] %s: nova-compute 33.0.0 -> 34.0.0' % HOST, self.said)
        with open(os.path.join(self.workdir, 'out', 'reports', RUN_ID, 'report.md')) as handle:
            self.assertIn('nova-compute 33.0.0 -\\> 34.0.0', handle.read())
        # issue 31: the node's time in nova's cycle, against nova 34's own os-services API; the
        # added time is the roll's tasks (Ansible's per-task cost) and its waits
        figures = self.cycle_figures()
        self.said_cycle('nova read at most every %s s' % poll if poll else 'the role\'s default polling', figures)
        self.assert_waited_for_two_writes()
        self.assertEqual(['heartbeat', 'heartbeat'], [kind for _when, kind in figures['writes']][:2])
        self.assertGreater(figures['downtime'], figures['nova_stop_start'])
        self.assertGreater(figures['nova_stop_start'], 0)

    def lower_service_version(self):
        """nova's record of the node's nova-compute one service version older than this nova's, as
        the previous release left it: the new nova-compute then saves its version at its start
        (nova/service.py ``Service.start`` -> ``_update_service_ref``), after init_host and before
        its start-up pass, as on a real upgrade.  (The running one's heartbeats save only their
        count: the record keeps the older version.)"""
        from nova import context as nova_context
        from nova import objects
        from nova.db.main import api as db
        from nova.objects import service as service_obj
        ctxt = nova_context.get_admin_context()
        with nova_context.target_cell(ctxt, self.host_mappings[HOST].cell_mapping) as cctxt:
            record = objects.Service.get_by_host_and_binary(cctxt, HOST, 'nova-compute')
            # (through the database API: the object refuses a version below the deployment's)
            db.service_update(cctxt, record.id, {'version': service_obj.SERVICE_VERSION - 1})
        return service_obj.SERVICE_VERSION

    def test_an_upgraded_nova_compute_saves_its_version_first_and_the_roll_waits_for_its_heartbeat(self):
        """issue 31, the upgrade case: the new nova-compute's first write is its service version,
        saved before its start-up pass; with forced_down the roll clears it after that write and
        waits for the first heartbeat (5 s after the start-up), not for a second one."""
        newest = []
        old_start = self.start_old_nova

        def start_old_nova():
            old_start()
            newest.append(self.lower_service_version())
        self.start_old_nova = start_old_nova
        rc = self.roll(rolling_reshape_nova_expected_version='34.0.0')
        self.assertEqual(0, rc, self.output)
        said = ' '.join(self.stdlog.logger.output[self.restart_mark:].split())
        self.assertIn('Updating service version for nova-compute on %s from %d to %d'
                      % (HOST, newest[0] - 1, newest[0]), said)
        self.assertEqual([{'forced_down': True}, {'forced_down': False}, {'status': 'enabled'}], self.puts()[1:])
        self.assertEqual([], self.writes_at_start)
        self.assert_started_cleanly(self.restart_mark)
        # nova's writes as its answers stamped them: the version saved inside the start, the
        # clearing after it, then the first heartbeat, and the enable after that heartbeat
        start_begun, start_end = [(b, e) for action, b, e in self.control_times if action == 'start'][-1]
        figures = self.cycle_figures()
        stamps = [(kind, sent, u) for (kind, sent, _s, _v), u in zip(self.seen, self.seen_updated) if u]
        cleared = [u for kind, sent, u in stamps if kind == 'PUT' and sent == {'forced_down': False}][-1]
        enabled = [u for kind, sent, u in stamps if kind == 'PUT' and sent == {'status': 'enabled'}][-1]
        writes_before_clearing = sorted(set(u for kind, sent, u in stamps if kind == 'GET' and u < cleared))
        saved = writes_before_clearing[-1]
        self.assertLess(self.epoch(saved), start_end, (saved, start_begun, start_end))
        self.assertGreater(self.epoch(saved), start_begun)
        beats = sorted(set(u for kind, sent, u in stamps if kind == 'GET' and cleared < u < enabled))
        self.assertEqual(1, len(beats), stamps)
        # the first heartbeat, not a second one: within one report_interval of the start's end
        self.assertLess(self.epoch(beats[0]) - start_end, 10.0)
        self.assertLess(figures['downtime'], 12.0, figures)
        self.said_cycle('an upgrade: the service version saved at the start, the role\'s default polling', figures)
        self.assert_waited_for_two_writes()
        self.assertEqual(['version saved', 'heartbeat'], [kind for _when, kind in figures['writes']][:2])

    # ------------------------------------------------------------ a real Keystone (issue 31)
    def token_figures(self):
        """What Keystone cost the roll: the tokens it issued to the modules (through the counting
        proxy) during the whole roll and between the disable PUT's answer and the enable PUT's
        answer, the seconds it spent issuing them (the proxy's request to its answer), and the
        validations nova's and Placement's auth sent it (each token once: cached)."""
        puts = [(sent, when) for (kind, sent, _status, _view), when in zip(self.seen, self.seen_times) if kind == 'PUT']
        disabled = [when for sent, when in puts if sent.get('status') == 'disabled'][0]
        enabled = [when for sent, when in puts if sent.get('status') == 'enabled'][-1]
        issued = [(begun, end) for begun, end, status, _token in self.keystone_proxy.issued if status == 201]
        window = [(begun, end) for begun, end in issued if begun >= disabled and end <= enabled]
        validations = [(begun, end) for validator in (self.nova_auth.validator, self.placement_auth.validator)
                       for _token, begun, end, _status in validator.validations if begun >= self.roll_began]
        return {'tokens_roll': len(issued), 'tokens_roll_s': sum(end - begun for begun, end in issued),
                'tokens_cycle': len(window), 'tokens_cycle_s': sum(end - begun for begun, end in window),
                'validations': len(validations), 'validations_s': sum(end - begun for begun, end in validations),
                'keystone_requests': len(self.keystone_proxy.requests), 'roll_s': self.roll_ended - self.roll_began}

    def said_tokens(self, case, figures):
        print('keystone on nova 34 (password auth, bcrypt %d rounds, %s): %d tokens issued during the roll '
              '(%.2f s in Keystone), %d between the disable and the enable (%.2f s), %d validations by nova and '
              'Placement (%.2f s), %d requests to Keystone, the roll %.1f s'
              % (KEYSTONE_ROUNDS, case, figures['tokens_roll'], figures['tokens_roll_s'], figures['tokens_cycle'],
                 figures['tokens_cycle_s'], figures['validations'], figures['validations_s'],
                 figures['keystone_requests'], figures['roll_s']))

    @staticmethod
    def said_side_by_side(cases):
        rows = [('downtime, s', 'downtime', '%.2f'), ('nova\'s own stop and start, s', 'nova_stop_start', '%.2f'),
                ('nova-compute\'s two writes, s', 'nova_reports', '%.2f'), ('added by the roll, s', 'added', '%.2f'),
                ('requests to nova', 'nova_requests', '%d'), ('tokens issued, the roll', 'tokens_roll', '%d'),
                ('  Keystone issuing them, s', 'tokens_roll_s', '%.2f'),
                ('tokens issued, disable..enable', 'tokens_cycle', '%d'),
                ('  Keystone issuing them, s', 'tokens_cycle_s', '%.2f'),
                ('validations (nova, Placement)', 'validations', '%d'), ('the roll, s', 'roll_s', '%.1f')]
        names = sorted(cases)
        lines = ['nova-cycle with a real Keystone (password auth, bcrypt %d rounds), side by side:' % KEYSTONE_ROUNDS,
                 '%-34s %s' % ('', ' '.join('%24s' % name for name in names))]
        for label, key, form in rows:
            lines.append('%-34s %s' % (label, ' '.join('%24s' % (form % cases[name][key]) for name in names)))
        print('\n'.join(lines))

    def keystone_roll(self, case, env=None):
        """The restart case (force_down on, the role's default polling) with production's auth: a
        real Keystone with bcrypt at KEYSTONE_ROUNDS, the modules authenticating by password
        (``placement_backend``: auth_type password, region RegionOne, no endpoint), Placement and
        nova found in Keystone's catalog (no rolling_reshape_compute_endpoint), both validating
        every token with Keystone as keystonemiddleware does (cached 300 s)."""
        rc = self.roll(keystone_rounds=KEYSTONE_ROUNDS, env=env, rolling_reshape_nova_expected_version='34.0.0')
        self.assertEqual(0, rc, self.output)
        self.assertEqual(['stop', 'start'], [a for a in self.control_log if a != 'version'])
        self.assertEqual([('enabled', 'up'), ('disabled', 'up'), ('disabled', 'down'), ('disabled', 'up'),
                          ('enabled', 'up')], self.states(), self.seen)
        puts = self.puts()
        self.assertEqual(4, len(puts), puts)
        self.assertEqual('disabled', puts[0]['status'])
        self.assertEqual([{'forced_down': True}, {'forced_down': False}, {'status': 'enabled'}], puts[1:])
        self.assertTrue(all(status.startswith('200') for _k, _b, status, _v in self.seen), self.seen)
        self.assertEqual([], self.writes_at_start)
        self.assert_started_cleanly(self.restart_mark)
        self.assertLessEqual(set(self.writes_after_start), {'PUT /resource_providers/%s/traits' % self.root_uuid})
        self.assertEqual('reshaped', self.node_summary()['status'])
        self.assert_waited_for_two_writes()
        # Keystone issued the modules' tokens (through the proxy, during the roll), and every request
        # to nova and to Placement but their version documents carried one of them, validated by Keystone
        proxy = self.keystone_proxy
        self.assertTrue(proxy.issued, proxy.requests)
        self.assertEqual([201] * len(proxy.issued), [status for _b, _e, status, _t in proxy.issued], proxy.requests)
        self.assertTrue(all(self.roll_began <= begun and end <= self.roll_ended for begun, end, _s, _t in proxy.issued))
        for name, auth in (('nova', self.nova_auth), ('Placement', self.placement_auth)):
            kinds = set(how for _m, path, how in auth.checked if path not in ('', '/'))
            self.assertEqual({'validated'}, kinds, (name, auth.checked))
            self.assertLessEqual(auth.validator.validated(), proxy.tokens(), name)
            self.assertTrue(auth.validator.validated(), name)
        figures = self.cycle_figures()
        figures.update(self.token_figures())
        self.said_cycle('password auth with Keystone, %s, the role\'s default polling' % case, figures)
        self.said_tokens(case, figures)
        KEYSTONE_FIGURES[case] = figures
        if len(KEYSTONE_FIGURES) > 1:
            self.said_side_by_side(KEYSTONE_FIGURES)

    def test_with_keystone_password_auth_the_roll_restarts_nova_compute_and_says_what_its_tokens_cost(self):
        """issue 31 with production's authentication: the figures include Keystone's cost."""
        self.keystone_roll('token sharing default')

    def test_with_keystone_password_auth_and_token_sharing_off_the_roll_says_what_its_tokens_cost(self):
        """The same with PLACEMENT_UPGRADE_TOKEN_SHARING=off in ansible-playbook's environment (the
        shared token cache's off switch: every task authenticates anew)."""
        self.keystone_roll('token sharing off', env={'PLACEMENT_UPGRADE_TOKEN_SHARING': 'off'})

    @staticmethod
    def epoch(stamp):
        text = stamp.replace('T', ' ')[:26]
        form = '%Y-%m-%d %H:%M:%S.%f' if '.' in text else '%Y-%m-%d %H:%M:%S'
        return datetime.datetime.strptime(text, form).replace(tzinfo=datetime.timezone.utc).timestamp()

    def test_a_nova_compute_that_writes_to_the_tree_fails_the_node_left_disabled(self):
        def new_conf():
            # the new nova.conf reserves host memory: nova-compute rewrites the root's inventory
            self.flags(reserved_host_memory_mb=1024)
        self.on_start = new_conf
        rc = self.roll()
        self.assertNotEqual(0, rc, self.output)
        self.assertIn('The roll stops at %s: %s: the tree changed after the reshape, while nova-compute came back'
                      % (HOST, HOST), self.said)
        self.assertIn('%s generation' % HOST, self.said)
        self.assertIn('(inventory DISK_GB,MEMORY_MB,VCPU -> DISK_GB,MEMORY_MB,VCPU)', self.said)
        self.assertIn('nova-compute of %s is left disabled in nova' % HOST, self.said)
        self.assertIn('PUT /resource_providers/%s/inventories' % self.root_uuid, self.writes_at_start)
        view = self.novas_view()
        self.assertEqual('disabled', view['status'])
        self.assertIn('placement.upgrade %s' % RUN_ID, view['disabled_reason'])
        self.assertNotIn({'status': 'enabled'}, self.puts())
        node = self.node_summary()
        self.assertEqual('failed', node['status'])
        self.assertEqual({'before': OLD_VERSION, 'after': '34.0.0'}, node['nova_compute'])

    def test_a_new_nova_compute_of_another_version_fails_the_node_before_it_is_enabled(self):
        rc = self.roll(rolling_reshape_nova_expected_version='35')
        self.assertNotEqual(0, rc, self.output)
        self.assertIn('%s: the new nova-compute is 34.0.0, not 35 (rolling_reshape_nova_expected_version); it runs, '
                      'and is left disabled in nova' % HOST, self.said)
        view = self.novas_view()
        self.assertEqual(('disabled', 'up'), (view['status'], view['state']))
        self.assertEqual([], self.writes_at_start)
        node = self.node_summary()
        self.assertEqual('failed', node['status'])
        self.assertEqual({'before': OLD_VERSION, 'after': '34.0.0'}, node['nova_compute'])
