# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in of nova's os-services API (compute microversion 2.53) whose nova-compute services
live on real timers: for benchmarks/bench_nova_cycle.py (issue 31) and its unit tests.

Each host's nova-compute is modelled from the wall clock, nothing runs in the background:

* ``stop(host)`` (what ``systemctl stop`` does on the node) blocks ``t_stop`` seconds; the process
  ends then, and so do its heartbeats.
* ``start(host)`` returns at once (a unit of ``Type=simple``); the process reports for the first
  time ``t_start`` seconds later (nova-compute's start-up: init_host, the first
  ``update_available_resource``), then every ``report_interval``.
* a service's ``updated_at`` is the last write of its record, as nova's is (the DB row's
  ``updated_at``): its last heartbeat (``ready_at + k * report_interval``) or a PUT, whichever
  came last; nova's servicegroup DB driver says it is ``up`` while the last HEARTBEAT
  (``last_seen_up``, not shown) is at most ``service_down_time`` old, and ``down`` otherwise or
  when ``forced_down`` is set.  So, as with nova 34 (tests/nova_oracle/test_nova_services.py), a
  service stopped and forced down reads up with a fresh ``updated_at`` once ``forced_down`` is
  cleared, running or not.
* ``PUT /v2.1/os-services/{uuid}`` takes ``status`` (``enabled``/``disabled``),
  ``disabled_reason`` and ``forced_down`` as nova 2.53+ does: 400 for a body with none of
  ``status``/``forced_down``, for a ``disabled_reason`` without ``status: disabled``, for a
  ``status`` that is neither; 404 for an unknown id; the answer is the service record.
* ``GET /v2.1/os-services?host=&binary=``: the matching records, with ``state`` and
  ``updated_at`` (``%Y-%m-%dT%H:%M:%S.%f``, UTC, no zone).

Every duration is nova's (seconds of nova's defaults: report_interval 10, service_down_time 60)
multiplied by ``scale``: ``scale=0.1`` runs the cycle ten times faster, so a 60 s
service_down_time takes 6 s; the figures a benchmark prints must be divided by ``scale`` to read
as nova's seconds.  The requests and PUTs are counted (``gets``, ``puts``).

(tests/integration/test_nova_compute_supervised.py has another stand-in, tied to a fake
nova-compute process under a stand-in unit; this one has no process, only timers.)
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import threading
import time
import uuid

try:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse
except ImportError:  # pragma: no cover
    pass

#: nova's own defaults, in nova's seconds
REPORT_INTERVAL = 10.0
SERVICE_DOWN_TIME = 60.0
STAMP = '%Y-%m-%dT%H:%M:%S.%f'


def _stamp(seconds):
    return datetime.datetime.utcfromtimestamp(seconds).strftime(STAMP)


class ComputeService(object):
    """One host's nova-compute: its nova record and its process's timeline (wall-clock seconds)."""

    def __init__(self, host, ready_at):
        self.record = {'id': str(uuid.uuid4()), 'host': host, 'binary': 'nova-compute', 'zone': 'nova',
                       'status': 'enabled', 'disabled_reason': None, 'forced_down': False}
        self.ready_at = ready_at      # first heartbeat of the running process (None: never started)
        self.stopped_at = None        # when the process ended (None: running, or starting)
        self.last_report = None       # the heartbeat of a process that ended
        self.written_at = None        # the last PUT to its record
        self.events = []


class NovaCycle(object):
    """The os-services API over HTTP on 127.0.0.1 (``url`` ends in ``/v2.1``)."""

    def __init__(self, scale=1.0, t_stop=3.0, t_start=10.0, report_interval=REPORT_INTERVAL,
                 service_down_time=SERVICE_DOWN_TIME, clock=time.time, sleep=time.sleep):
        self.scale = float(scale)
        self.t_stop = t_stop * self.scale
        self.t_start = t_start * self.scale
        self.report_interval = report_interval * self.scale
        self.service_down_time = service_down_time * self.scale
        self.clock, self.sleep = clock, sleep
        self.services = {}
        self.gets = 0
        self.puts = []
        self.lock = threading.Lock()
        nova = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def _send(self, status, body):
                data = json.dumps(body).encode('utf-8')
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.send_header('OpenStack-API-Version', 'compute 2.53')
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlparse(self.path)
                if url.path.rstrip('/') != '/v2.1/os-services':
                    return self._send(404, {'itemNotFound': {'code': 404, 'message': 'no %s here' % url.path}})
                query = dict((k, v[0]) for k, v in parse_qs(url.query).items())
                return self._send(200, {'services': nova.list(query.get('host'), query.get('binary'))})

            def do_PUT(self):
                url = urlparse(self.path)
                length = int(self.headers.get('Content-Length') or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b'{}')
                except ValueError:
                    return self._send(400, {'badRequest': {'code': 400, 'message': 'not JSON'}})
                prefix = '/v2.1/os-services/'
                if not url.path.startswith(prefix):
                    return self._send(404, {'itemNotFound': {'code': 404, 'message': 'no %s here' % url.path}})
                status, answer = nova.update(url.path[len(prefix):], body)
                return self._send(status, answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        self.url = 'http://127.0.0.1:%d/v2.1' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={'poll_interval': 0.05})
        self.thread.daemon = True
        self.thread.start()

    # -- the node side (what the service manager does) --------------------------------------------
    def add(self, host, running_for=0.0):
        """A running nova-compute on ``host`` whose first heartbeat was ``running_for`` seconds
        (scaled already) ago: that sets where its heartbeats fall against the roll."""
        with self.lock:
            self.services[host] = ComputeService(host, self.clock() - running_for)
            return dict(self.services[host].record)

    def stop(self, host):
        """Stop the process (blocks t_stop); its last heartbeat stays nova's updated_at."""
        started = self.clock()
        self.sleep(self.t_stop)
        with self.lock:
            service = self.services[host]
            now = self.clock()
            service.last_report = self._heartbeat(service, now)
            service.stopped_at = now
            service.events.append(('stop', started, now))
        return now - started

    def start(self, host, t_start=None):
        """Start the process (returns at once); it reports t_start later (this node's own, in nova's
        seconds, when given), then every report_interval."""
        with self.lock:
            service = self.services[host]
            now = self.clock()
            service.stopped_at = None
            service.ready_at = now + (self.t_start if t_start is None else t_start * self.scale)
            service.events.append(('start', now, service.ready_at))
            return now

    # -- nova's side ------------------------------------------------------------------------------
    def _heartbeat(self, service, now):
        """The last report of ``service`` at ``now`` (wall-clock seconds), or None."""
        if service.stopped_at is not None or service.ready_at is None:
            return service.last_report
        if now < service.ready_at:
            return service.last_report         # starting: its old record stays
        beats = int((now - service.ready_at) // self.report_interval) if self.report_interval > 0 else 0
        return service.ready_at + beats * self.report_interval

    def shown(self, service, now=None):
        now = self.clock() if now is None else now
        last = self._heartbeat(service, now)
        alive = last is not None and abs(now - last) <= self.service_down_time
        written = max(t for t in (last, service.written_at, -1.0) if t is not None)
        return dict(service.record, state='up' if alive and not service.record['forced_down'] else 'down',
                    updated_at=_stamp(written) if written >= 0 else None)

    def list(self, host=None, binary=None):
        with self.lock:
            self.gets += 1
            return [self.shown(s) for s in self.services.values()
                    if (host is None or s.record['host'] == host) and (binary is None or s.record['binary'] == binary)]

    def update(self, service_id, body):
        """nova 2.53's PUT /os-services/{id}: ``(status code, answer)``."""
        bad = None
        if not isinstance(body, dict) or not ('status' in body or 'forced_down' in body):
            bad = 'Invalid input for field/attribute: at least one of status or forced_down must be given.'
        elif 'status' in body and body['status'] not in ('enabled', 'disabled'):
            bad = "Invalid input for field/attribute status. Value: %s." % body['status']
        elif 'disabled_reason' in body and body.get('status') != 'disabled':
            bad = 'Specifying \'disabled_reason\' with status \'enabled\' is invalid.'
        elif 'forced_down' in body and not isinstance(body['forced_down'], bool):
            bad = 'Invalid input for field/attribute forced_down. Value: %s.' % body['forced_down']
        if bad:
            return 400, {'badRequest': {'code': 400, 'message': bad}}
        with self.lock:
            found = [s for s in self.services.values() if s.record['id'] == service_id]
            if not found:
                return 404, {'itemNotFound': {'code': 404, 'message': 'Service %s could not be found.' % service_id}}
            service = found[0]
            self.puts.append((service.record['host'], dict(body), self.clock()))
            service.written_at = self.clock()
            if body.get('status') == 'enabled':
                service.record.update(status='enabled', disabled_reason=None)
            elif body.get('status') == 'disabled':
                service.record.update(status='disabled', disabled_reason=body.get('disabled_reason'))
            if 'forced_down' in body:
                service.record['forced_down'] = body['forced_down']
            return 200, {'service': self.shown(service)}

    def close(self):
        self.server.shutdown()
        self.server.server_close()
