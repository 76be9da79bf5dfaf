# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fault-injecting HTTP proxy on 127.0.0.1 in front of a real Placement (issue 12, b).

Every request is forwarded to the upstream URL (a callable: a restarted server has a new
port) unless a fault is armed for it.  Requests are labelled by the step of a reshape
they belong to, from the method and path alone:

``read``     a GET before the first ``POST /reshaper`` (the tree read, the plan's reads)
``rc``       ``PUT /resource_classes/{name}``
``child``    ``POST /resource_providers`` (a child created for the layout)
``trait``    ``PUT /traits/{name}``, ``PUT /resource_providers/{u}/traits``
``reshape``  ``POST /reshaper``
``verify``   a GET after a ``POST /reshaper`` (the verification's reads)

``arm(kind, step, nth)`` fires the fault on the ``nth`` request of ``step`` (and the next
ones too for ``503x4``, which outlasts the client's retries).  Kinds:

``500`` ``502`` ``503`` ``504``  answered by the proxy, nothing forwarded
``lost``        forwarded (the server applies it), then the connection is closed unanswered
``drop``        the connection is closed before anything is forwarded
``timeout``     held longer than the client's timeout, then forwarded (applied late)
``kill``        forwarded, the server SIGKILLed 0-30 ms later and restarted on the same
                database; the connection is closed unanswered (applied or not)
``kill_before`` the server SIGKILLed and restarted, the request dropped unforwarded

Loopback only: the proxy binds 127.0.0.1 and forwards to the given upstream only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client
import json
import random
import re
import threading
import time

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

LOOPBACK = '127.0.0.1'
_HOP = frozenset(('connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te',
                  'trailers', 'transfer-encoding', 'upgrade', 'content-length'))
_REASONS = {500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
            504: 'Gateway Timeout'}


def step_of(method, path, after_reshape):
    path = path.split('?', 1)[0].rstrip('/') or '/'
    if path == '/':
        return 'discovery'
    if method == 'POST' and path == '/reshaper':
        return 'reshape'
    if method == 'POST' and path == '/resource_providers':
        return 'child'
    if method == 'PUT' and (path.startswith('/traits/') or re.match(r'^/resource_providers/[^/]+/traits$', path)):
        return 'trait'
    if method == 'PUT' and path.startswith('/resource_classes/'):
        return 'rc'
    if method == 'GET':
        return 'verify' if after_reshape else 'read'
    return '%s_other' % method.lower()


class FaultProxy(object):
    """``FaultProxy(upstream, restart=None, client_timeout=1.0)``; ``start()``, ``url``,
    ``reset()``, ``arm()``, ``disarm()``, ``fired``, ``step_counts``, ``wait_idle()``, ``stop()``.

    ``upstream``: callable returning the server's base URL.  ``restart``: callable that
    SIGKILLs the server and serves it again on the same database (``kill`` faults).
    """

    def __init__(self, upstream, restart=None, client_timeout=1.0, seed=0):
        self.upstream = upstream
        self.restart = restart
        self.client_timeout = client_timeout
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.inflight = 0
        self.rule = None
        self.fired = 0
        self.step_counts = {}
        self.after_reshape = False
        self.log = []
        self.httpd = None
        self.thread = None
        self.url = None

    # -- control ------------------------------------------------------------
    def start(self):
        proxy = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        Server.proxy = proxy
        self.httpd = Server((LOOPBACK, 0), _Handler)
        self.url = 'http://%s:%d' % (LOOPBACK, self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={'poll_interval': 0.1},
                                       name='fault-proxy', daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def reset(self):
        with self.lock:
            self.rule = None
            self.fired = 0
            self.step_counts = {}
            self.after_reshape = False
            self.log = []

    def arm(self, kind, step, nth=1):
        repeat = 1
        if kind == '503x4':
            kind, repeat = '503', 4
        with self.lock:
            self.rule = {'kind': kind, 'step': step, 'first': nth, 'last': nth + repeat - 1}
            self.fired = 0

    def disarm(self):
        with self.lock:
            self.rule = None

    def wait_idle(self, timeout=60.0):
        """Wait until no request is being handled (a delayed write has landed or failed)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.inflight:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError('fault proxy still busy after %.0f s' % timeout)
                self.idle.wait(left)

    # -- per request ----------------------------------------------------------
    def _decide(self, method, path):
        with self.lock:
            self.inflight += 1
            step = step_of(method, path, self.after_reshape)
            if step == 'reshape':
                self.after_reshape = True
            n = self.step_counts[step] = self.step_counts.get(step, 0) + 1
            fault = None
            rule = self.rule
            if rule and rule['step'] == step and rule['first'] <= n <= rule['last']:
                fault = rule['kind']
                self.fired += 1
            self.log.append((step, method, path, fault))
            return step, fault

    def _done(self):
        with self.lock:
            self.inflight -= 1
            self.idle.notify_all()

    def forward(self, method, path, headers, body):
        """(status, reason, headers, body) from upstream, or None when it cannot be reached."""
        base = self.upstream()
        if not base:
            return None
        parts = urlsplit(base)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            conn.request(method, path, body=body or None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, resp.reason, resp.getheaders(), data
        except (OSError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    def kill_server(self):
        if self.restart is None:
            raise RuntimeError('a kill fault needs restart=')
        self.restart()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def _handle(self):
        proxy = self.server.proxy
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else b''
        headers = dict((k, v) for k, v in self.headers.items() if k.lower() not in _HOP)
        step, fault = proxy._decide(self.command, self.path)
        try:
            self._serve(proxy, fault, headers, body)
        finally:
            proxy._done()

    def _drop(self):
        self.close_connection = True

    def _serve(self, proxy, fault, headers, body):
        if fault in ('500', '502', '503', '504'):
            status = int(fault)
            data = json.dumps({'errors': [{'status': status, 'title': _REASONS[status],
                                           'detail': 'injected by the fault proxy', 'code': None,
                                           'request_id': None}]}).encode('utf-8')
            self._answer(status, _REASONS[status], [('Content-Type', 'application/json')], data)
            return
        if fault == 'drop':
            return self._drop()
        if fault == 'kill_before':
            proxy.kill_server()
            return self._drop()
        if fault == 'kill':
            done = []
            worker = threading.Thread(target=lambda: done.append(
                proxy.forward(self.command, self.path, headers, body)), daemon=True)
            worker.start()
            time.sleep(proxy.rng.uniform(0, 0.03))
            proxy.kill_server()
            worker.join(60)
            return self._drop()
        if fault == 'timeout':
            time.sleep(proxy.client_timeout + 0.5)
        answer = proxy.forward(self.command, self.path, headers, body)
        if answer is None or fault == 'lost':
            return self._drop()
        status, reason, resp_headers, data = answer
        self._answer(status, reason, resp_headers, data)
        if fault == 'timeout':
            self._drop()

    def _answer(self, status, reason, headers, data):
        try:
            self.send_response(status, reason)
            for key, value in headers:
                if key.lower() not in _HOP and key.lower() not in ('server', 'date'):
                    self.send_header(key, value)
            self.send_header('Content-Length', str(len(data) if status not in (204, 304) else 0))
            self.end_headers()
            if data and status not in (204, 304) and self.command != 'HEAD':
                self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self._drop()
