# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real Keystone for the nova oracle's end-to-end test (tests/nova_oracle/test_nova_e2e.py).

Keystone 30 is installed in the PROJECT venv, not in the nova venv this test runs in: it is started
as ``.venv/bin/python tests/keystone_server.py --keystone-only`` (a child process that runs Keystone
in a child of its own), with the user ``operator`` (roles admin, service, reader, member, project
``service``) and the catalog's ``placement`` and ``compute`` endpoints (the URLs the test serves),
and stopped by its pid.

Around it, in the test process:

* :class:`TokenValidator`: what keystonemiddleware's ``auth_token`` does for a service: validate a
  token with ``GET {auth_url}/auth/tokens`` (``X-Auth-Token``: a service token of its own,
  ``X-Subject-Token``: the token checked) and keep a valid token ``token_cache_time`` seconds (300,
  keystonemiddleware's default), so that a token is validated once, as a production service with
  memcached does; a token Keystone refuses is None (the wrapper answers 401);
* :class:`PlacementAuth`: that validation in front of the harness' Placement (its ``noauth2``
  pipeline then makes the request context from the validated user, project and roles);
* :class:`CountingProxy`: a pass-through proxy in front of Keystone, given to the modules as their
  ``auth_url``: every token Keystone ISSUES to them (``POST /v3/auth/tokens``) is counted and timed
  there (the validators talk to Keystone directly, so only the modules' requests pass).
"""

import http.client
import json
import os
import signal
import subprocess
import threading
import time
from urllib.parse import urlparse

import playbook

KEYSTONE_SERVER = os.path.join(playbook.REPO, 'tests', 'keystone_server.py')
# keystonemiddleware's [keystone_authtoken] token_cache_time default (keystonemiddleware/auth_token/_opts.py)
TOKEN_CACHE_TIME = 300
# what the HTTP/1.1 hop-by-hop headers are: not forwarded (wsgiref refuses them from an app)
HOP_BY_HOP = frozenset(('connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te',
                        'trailers', 'transfer-encoding', 'upgrade'))


class KeystoneProcess(object):
    """``keystone_server.py --keystone-only`` in the project venv; :meth:`wait` gives its state."""

    def __init__(self, workdir, password_hash_rounds, endpoints):
        os.makedirs(workdir)
        self.workdir = workdir
        self.state_file = os.path.join(workdir, 'state.json')
        self.log_path = os.path.join(workdir, 'keystone_server.out')
        command = [os.path.join(playbook.MAIN_VENV, 'bin', 'python'), KEYSTONE_SERVER, '--keystone-only',
                   '--state-file', self.state_file, '--workdir', os.path.join(workdir, 'keystone'),
                   '--password-hash-rounds', str(password_hash_rounds)]
        for service_type, url in sorted(endpoints.items()):
            command += ['--endpoint', '%s=%s' % (service_type, url)]
        env = dict(os.environ)
        for key in [k for k in env if k.startswith(('OS_', 'PYTHON'))] + ['VIRTUAL_ENV']:
            env.pop(key, None)
        self._out = open(self.log_path, 'wb')
        self.proc = subprocess.Popen(command, stdout=self._out, stderr=subprocess.STDOUT, env=env, close_fds=True)
        self.state = None

    def _tail(self):
        with open(self.log_path, 'rb') as handle:
            return handle.read()[-3000:].decode('utf-8', 'replace')

    def wait(self, timeout=120):
        """The state keystone_server.py wrote: {pid, keystone_pid, auth_url, log, password_hash_rounds,
        region_name, auth}; raises RuntimeError with its output when it exits or does not come up."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.state_file):
            if self.proc.poll() is not None:
                raise RuntimeError('keystone_server.py exited (rc %s): %s' % (self.proc.returncode, self._tail()))
            if time.monotonic() > deadline:
                raise RuntimeError('keystone_server.py did not come up within %s s: %s' % (timeout, self._tail()))
            time.sleep(0.05)
        with open(self.state_file) as handle:
            self.state = json.load(handle)
        return self.state

    def stop(self):
        """SIGTERM to keystone_server.py by its pid (it stops its Keystone), SIGKILL after 15 s."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._out.close()


def _http(url, method, path, body=None, headers=None, timeout=60):
    """(status, headers, body bytes) of one request to ``url``'s host (no proxy from the environment)."""
    where = urlparse(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.reason, resp.getheaders(), resp.read()
    finally:
        conn.close()


def password_body(auth):
    return json.dumps({'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': auth['username'], 'domain': {'name': auth['user_domain_name']}, 'password': auth['password']}}},
        'scope': {'project': {'name': auth['project_name'], 'domain': {'name': auth['project_domain_name']}}}}})


class TokenValidator(object):
    """keystonemiddleware's token validation for one service (nova's API, Placement)."""

    def __init__(self, name, cache_time=TOKEN_CACHE_TIME):
        self.name = name
        self.cache_time = cache_time
        self.auth_url = None
        self.auth = None
        self.service_token = None
        self._cache = {}
        self._lock = threading.Lock()
        #: every validation sent to Keystone: (token, begun, end, HTTP status)
        self.validations = []

    def connect(self, auth_url, auth):
        """Authenticate as the service (its own token, issued straight by Keystone)."""
        self.auth_url = auth_url.rstrip('/')
        self.auth = auth
        self.service_token = self._issue()

    def _issue(self):
        path = urlparse(self.auth_url).path + '/auth/tokens'
        status, reason, headers, _body = _http(self.auth_url, 'POST', path, password_body(self.auth),
                                               {'Content-Type': 'application/json'})
        if status != 201:
            raise RuntimeError('%s could not authenticate with Keystone: %s %s' % (self.name, status, reason))
        return dict((k.lower(), v) for k, v in headers)['x-subject-token']

    def check(self, token):
        """{'user_id', 'project_id', 'roles'} of a token Keystone says is valid (cached), else None."""
        if not token or self.auth_url is None:
            return None
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(token)
            if hit is not None and hit[0] > now:
                return hit[1]
        path = urlparse(self.auth_url).path + '/auth/tokens'
        for attempt in (1, 2):
            begun = time.time()
            status, _reason, _headers, body = _http(self.auth_url, 'GET', path, headers={
                'X-Auth-Token': self.service_token, 'X-Subject-Token': token})
            self.validations.append((token, begun, time.time(), status))
            if status == 401 and attempt == 1:      # the service's own token expired: a new one
                self.service_token = self._issue()
                continue
            break
        if status != 200:
            return None
        data = json.loads(body.decode('utf-8'))['token']
        info = {'user_id': data['user']['id'], 'project_id': (data.get('project') or {}).get('id'),
                'roles': sorted(role['name'] for role in data.get('roles') or ())}
        with self._lock:
            self._cache[token] = (now + self.cache_time, info)
        return info

    def validated(self):
        """The tokens Keystone said were valid."""
        return set(token for token, _b, _e, status in self.validations if status == 200)


# the identity headers a client could send that only the auth middleware may set
IDENTITY_HEADERS = ('HTTP_X_ROLES', 'HTTP_X_USER_ID', 'HTTP_X_TENANT_ID', 'HTTP_X_PROJECT_ID', 'HTTP_X_AUTH_USER',
                    'HTTP_X_AUTH_PROJECT_ID', 'HTTP_X_USER', 'HTTP_X_TENANT', 'HTTP_OPENSTACK_SYSTEM_SCOPE')


def unauthorized(start_response):
    start_response('401 Unauthorized', [('Content-Type', 'application/json')])
    return [b'{"error": {"message": "The request you have made requires authentication.", "code": 401}}']


class PlacementAuth(object):
    """keystonemiddleware in front of the harness' Placement (``auth_strategy = noauth2``): a token
    Keystone validates becomes noauth2's ``user:project`` token and ``X-Roles``; any other is 401.
    The version document (``/``) is answered without a token, as Placement's own auth does.
    ``checked``: (method, path, 'validated' | 'refused' | 'none') of every request."""

    def __init__(self, app, validator):
        self.app = app
        self.validator = validator
        self.checked = []

    def __call__(self, environ, start_response):
        for key in IDENTITY_HEADERS:
            environ.pop(key, None)
        path = environ.get('PATH_INFO', '')
        method = environ.get('REQUEST_METHOD')
        if path in ('', '/'):
            self.checked.append((method, path, 'none'))
            return self.app(environ, start_response)
        info = self.validator.check(environ.get('HTTP_X_AUTH_TOKEN'))
        if info is None:
            self.checked.append((method, path, 'refused'))
            return unauthorized(start_response)
        self.checked.append((method, path, 'validated'))
        environ['HTTP_X_AUTH_TOKEN'] = '%s:%s' % (info['user_id'], info['project_id'])
        environ['HTTP_X_ROLES'] = ','.join(info['roles'])
        return self.app(environ, start_response)


class CountingProxy(object):
    """A pass-through proxy in front of Keystone (the modules' ``auth_url``): ``issued`` holds
    (begun, end, HTTP status, token) of every ``POST .../auth/tokens``, ``requests`` (method,
    path, status) of every request.  The Host header is passed on, so Keystone's version
    document names the proxy."""

    def __init__(self, target_url):
        self.target_url = target_url
        self.issued = []
        self.requests = []

    def __call__(self, environ, start_response):
        method = environ.get('REQUEST_METHOD')
        path = environ.get('PATH_INFO', '') or '/'
        if environ.get('QUERY_STRING'):
            path += '?' + environ['QUERY_STRING']
        length = int(environ.get('CONTENT_LENGTH') or 0)
        body = environ['wsgi.input'].read(length) if length else None
        headers = dict((key[5:].replace('_', '-').title(), value) for key, value in environ.items()
                       if key.startswith('HTTP_') and key[5:].replace('_', '-').lower() not in HOP_BY_HOP)
        if environ.get('CONTENT_TYPE'):
            headers['Content-Type'] = environ['CONTENT_TYPE']
        begun = time.time()
        status, reason, answer_headers, data = _http(self.target_url, method, path, body, headers)
        end = time.time()
        self.requests.append((method, path, status))
        if method == 'POST' and environ.get('PATH_INFO', '').rstrip('/').endswith('/auth/tokens'):
            token = dict((k.lower(), v) for k, v in answer_headers).get('x-subject-token')
            self.issued.append((begun, end, status, token))
        start_response('%d %s' % (status, reason), [(k, v) for k, v in answer_headers if k.lower() not in HOP_BY_HOP])
        return [data]

    def tokens(self):
        """The tokens Keystone issued through the proxy."""
        return set(token for _b, _e, status, token in self.issued if status == 201)
