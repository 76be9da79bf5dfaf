# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start a REAL OpenStack Keystone, and a real Placement authenticating against it, on 127.0.0.1.

Usage::

    from keystone_server import KeystoneStack
    with KeystoneStack() as stack:        # keystone, users, placement, catalog
        stack.password_auth('placement')   # module options for password auth
        ...

    python tests/keystone_server.py        # run one by hand until Ctrl-C

    # Keystone alone (no Placement), for a test in another venv (the nova oracle):
    python tests/keystone_server.py --keystone-only --state-file F \
        --password-hash-rounds 12 --endpoint placement=URL --endpoint compute=URL/v2.1

Keystone (PyPI ``keystone``, installed in the project venv by requirements-dev.txt)
    A temp dir holds ``keystone.conf`` (SQLite ``keystone.db``, fernet tokens, bcrypt with
    4 rounds so password checks are fast: ``password_hash_rounds`` / ``--password-hash-rounds``
    set another cost), the fernet and credential key repositories
    (the two keys ``keystone-manage fernet_setup``/``credential_setup`` would write:
    ``0`` staged and ``1`` primary, 32 random bytes each, urlsafe base64) and
    ``keystone.log``.  ONE child process (``python keystone_server.py --serve-keystone DIR
    PORT_FILE``) loads that config, runs the schema migrations (what ``keystone-manage
    db_sync`` does), binds a threaded wsgiref server to 127.0.0.1 on a port the kernel
    picks, runs keystone's own ``Bootstrapper`` (what ``keystone-manage bootstrap`` does:
    domain ``Default``, project ``admin``, user ``admin``, the roles ``admin``,
    ``manager``, ``member``, ``reader`` and ``service``, the identity service and its
    public endpoint ``http://127.0.0.1:PORT/v3`` in region ``RegionOne``), then serves
    keystone's WSGI application (the ``keystone.server.wsgi`` public application: the
    Flask app with keystone's middleware) and reports its port through a file.  Doing it
    in one process costs one keystone import instead of three ``keystone-manage`` runs.

Placement (tests/placement_server.py, with ``[api] auth_strategy = keystone``)
    keystonemiddleware's ``auth_token`` validates every token with this Keystone as the
    user ``placement`` (project ``service``); ``token_cache_time = -1`` so a revoked token
    is refused at once.  Placement's STOCK policy: ``POST /reshaper`` needs the
    ``service`` role, everything else ``admin`` or ``service``.  The ``placement``
    service and its public endpoint are registered in Keystone's catalog, so password
    auth finds Placement the way it does on a real cloud.

Users made by :class:`KeystoneStack` (all in domain ``Default``, project ``service``)
    ``placement``: roles ``admin`` and ``service`` (may reshape);
    ``operator``: role ``admin`` only (anything but ``POST /reshaper``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import datetime
import json
import os
import signal
import socket
import sys
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from placement_server import LOOPBACK, LoopbackService, PlacementServer  # noqa: E402
from server_util import authtoken_section, keystone_conf, secret, write_keystone_keys  # noqa: E402

REGION = 'RegionOne'
DOMAIN = 'Default'
SERVICE_PROJECT = 'service'
# bcrypt rounds of the tests' Keystones: a password check costs ~1 ms instead of ~0.24 s
FAST_HASH_ROUNDS = 4
# what a production Keystone uses: ``[identity] password_hash_rounds`` has no default
# (keystone/conf/identity.py: "The default for bcrypt is 12"), and bcrypt, the default
# ``password_hash_algorithm``, then hashes with keystone/common/password_hashers/bcrypt.py
# ``Bcrypt.hash(password, rounds=12)``; a check of such a hash takes ~0.24 s on this machine kind
PRODUCTION_HASH_ROUNDS = 12
# the roles of ``--keystone-only``'s user (what a deployment's operator account has)
OPERATOR_ROLES = ('admin', 'service', 'reader', 'member')

_KEYSTONE_CACHE = """\
[cache]
enabled = true
backend = oslo_cache.dict
"""

_PLACEMENT_CONF = """\
[DEFAULT]
debug = {debug}
use_stderr = true

[api]
auth_strategy = keystone

[placement_database]
connection = {db_url}
sync_on_startup = false

[oslo_policy]
policy_file = {policy_file}

"""


class KeystoneServerError(RuntimeError):
    """Keystone could not be prepared or did not come up (the log is named)."""


def closed_port_url():
    """``http://127.0.0.1:P/v3`` where nothing listens (a socket bound, never listening)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((LOOPBACK, 0))
    port = sock.getsockname()[1]
    return sock, 'http://%s:%d/v3' % (LOOPBACK, port)


class KeystoneServer(LoopbackService):
    """One real Keystone process on 127.0.0.1 with its own temp dir and SQLite db."""

    NAME = 'keystone'
    READY_PATH = '/v3'
    ERROR = KeystoneServerError
    LOG_NAME = 'keystone.log'
    DIR_PREFIX = 'keystone-server-'

    def __init__(self, workdir=None, admin_password=None, expiration=3600, debug=False,
                 python=None, start_timeout=90.0, password_hash_rounds=FAST_HASH_ROUNDS):
        self._init_process(workdir, python, start_timeout)
        self.admin_password = admin_password or secret('admin-pw')
        self.expiration = expiration
        #: bcrypt's cost for the passwords this Keystone stores (each check costs 2**rounds)
        self.password_hash_rounds = int(password_hash_rounds)
        self.debug = debug
        self._admin = None

    @property
    def auth_url(self):
        return self.url + '/v3'

    @property
    def conf_path(self):
        return os.path.join(self.workdir, 'keystone.conf')

    def _write_config(self):
        with open(self.conf_path, 'w') as fh:
            fh.write(keystone_conf(self.workdir, 'sqlite:///%s/keystone.db' % self.workdir,
                                   self.password_hash_rounds, expiration=self.expiration,
                                   default=('debug = %s' % ('true' if self.debug else 'false'), 'use_stderr = true'),
                                   extra=_KEYSTONE_CACHE))
        write_keystone_keys(self.workdir)

    def _env(self):
        env = dict(os.environ)
        env['OS_BOOTSTRAP_PASSWORD'] = self.admin_password
        env['NO_PROXY'] = env['no_proxy'] = LOOPBACK + ',localhost'
        return env

    def _command(self, port_file):
        return [self.python, os.path.abspath(__file__), '--serve-keystone', self.workdir, port_file]

    # -- the identity API, as the bootstrap admin ------------------------------
    def session(self, username='admin', password=None, project=None):
        """A keystoneauth Session authenticated by password (default: the bootstrap admin)."""
        from keystoneauth1 import session as ks_session
        from keystoneauth1.identity import v3

        if username == 'admin' and password is None:
            password = self.admin_password
            project = project or 'admin'
        auth = v3.Password(auth_url=self.auth_url, username=username, password=password,
                           project_name=project or SERVICE_PROJECT, user_domain_name=DOMAIN,
                           project_domain_name=DOMAIN)
        return ks_session.Session(auth=auth, timeout=30)

    def api(self, method, path, body=None, sess=None, **kwargs):
        if sess is None:
            if self._admin is None:
                self._admin = self.session()
            sess = self._admin
        kwargs.setdefault('raise_exc', True)
        resp = sess.request(self.auth_url + path, method, json=body, **kwargs)
        return resp.json() if resp.content else None

    def _find(self, collection, name):
        found = self.api('GET', '/%s?name=%s' % (collection, name))[collection]
        return found[0]['id'] if found else None

    def ensure_project(self, name):
        return self._find('projects', name) or self.api(
            'POST', '/projects', {'project': {'name': name, 'domain_id': 'default'}})['project']['id']

    def ensure_user(self, name, password, project, roles):
        project_id = self.ensure_project(project)
        user_id = self._find('users', name) or self.api(
            'POST', '/users', {'user': {'name': name, 'password': password, 'domain_id': 'default',
                                        'default_project_id': project_id}})['user']['id']
        for role in roles:
            role_id = self._find('roles', role)
            self.api('PUT', '/projects/%s/users/%s/roles/%s' % (project_id, user_id, role_id))
        return user_id

    def register_service(self, service_type, name, url):
        service = self.api('POST', '/services', {'service': {'type': service_type, 'name': name}})['service']
        for interface in ('public', 'internal', 'admin'):
            self.api('POST', '/endpoints', {'endpoint': {
                'service_id': service['id'], 'interface': interface, 'url': url, 'region_id': REGION}})
        return service['id']

    def add_region_endpoints(self, service_type, region, urls):
        """Register ``service_type``'s endpoints in a new ``region``, one URL per interface
        (``urls``: {'public': ..., 'internal': ..., 'admin': ...}), as a deployment whose public
        endpoint the controller cannot reach (kolla: only the internal one answers)."""
        self.api('POST', '/regions', {'region': {'id': region}})
        service_id = self.api('GET', '/services?type=%s' % service_type)['services'][0]['id']
        for interface, url in sorted(urls.items()):
            self.api('POST', '/endpoints', {'endpoint': {
                'service_id': service_id, 'interface': interface, 'url': url, 'region_id': region}})

    def issue_token(self, username, password, project=SERVICE_PROJECT):
        """A project-scoped token (the ``X-Subject-Token``) for ``username``."""
        from keystoneauth1 import session as ks_session

        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': username, 'domain': {'name': DOMAIN}, 'password': password}}},
            'scope': {'project': {'name': project, 'domain': {'name': DOMAIN}}}}}
        resp = ks_session.Session().post(self.auth_url + '/auth/tokens', json=body)
        return resp.headers['X-Subject-Token']

    def revoke_token(self, token):
        """``DELETE /v3/auth/tokens``: from now on Keystone refuses the token."""
        self.api('DELETE', '/auth/tokens', headers={'X-Subject-Token': token})

    def application_credential(self, username, password, name=None, expires_in=None):
        """(id, secret) of a new application credential of ``username`` (all its roles).

        ``expires_in``: seconds until the credential expires (None: never).
        """
        sess = self.session(username, password)
        user_id = sess.get_user_id()
        body = {'application_credential': {'name': name or secret('appcred')}}
        if expires_in is not None:
            when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=expires_in)
            body['application_credential']['expires_at'] = when.strftime('%Y-%m-%dT%H:%M:%S.%f')
        cred = self.api('POST', '/users/%s/application_credentials' % user_id, body, sess=sess)
        cred = cred['application_credential']
        return cred['id'], cred['secret']

    def short_lived_token(self, username, password, seconds=2):
        """(token, expires_at epoch) of a token that expires ``seconds`` from now.

        Keystone ends a token issued through an application credential when the credential
        expires (keystone/token/provider.py), so this is a token that really EXPIRES, while
        every other token of the stack keeps ``[token] expiration``.
        """
        cred_id, cred_secret = self.application_credential(username, password, expires_in=seconds)
        from keystoneauth1 import session as ks_session

        body = {'auth': {'identity': {'methods': ['application_credential'], 'application_credential': {
            'id': cred_id, 'secret': cred_secret}}}}
        resp = ks_session.Session().post(self.auth_url + '/auth/tokens', json=body)
        expires = resp.json()['token']['expires_at']
        when = datetime.datetime.strptime(expires.replace('Z', '')[:19], '%Y-%m-%dT%H:%M:%S')
        return resp.headers['X-Subject-Token'], when.replace(tzinfo=datetime.timezone.utc).timestamp()


class KeystonePlacement(PlacementServer):
    """A real Placement whose ``[api] auth_strategy`` is ``keystone`` (stock reshape policy)."""

    def __init__(self, keystone, service_password, **kwargs):
        kwargs.setdefault('reshape_policy', None)
        super(KeystonePlacement, self).__init__(**kwargs)
        self.keystone = keystone
        self.service_password = service_password

    def _write_config(self):
        db_url = self.db_url or 'sqlite:///' + self.db_path
        with open(self.conf_path, 'w') as fh:
            fh.write(_PLACEMENT_CONF.format(debug='true' if self.debug else 'false', db_url=db_url,
                                            policy_file=self.policy_path))
            fh.write(authtoken_section(self.keystone.auth_url, 'placement', self.service_password, SERVICE_PROJECT,
                                       DOMAIN, REGION, extra=('token_cache_time = -1',)))
        self._write_policy()


class KeystoneStack(object):
    """Keystone + a Placement using it + the users and catalog entries the tests need.

    ``passwords``: {'placement': ..., 'operator': ...} (random, so a test can grep for them).
    """

    USERS = {'placement': ('admin', 'service'), 'operator': ('admin',)}

    def __init__(self, debug=False, **placement_options):
        self.keystone = KeystoneServer(debug=debug)
        self.passwords = dict((user, secret('%s-pw' % user)) for user in self.USERS)
        self.placement = None
        #: PlacementServer's options for the Placement (e.g. ``db='mariadb', workers=4``)
        self.placement_options = placement_options

    def start(self):
        try:
            self.keystone.start()
            for user, roles in sorted(self.USERS.items()):
                self.keystone.ensure_user(user, self.passwords[user], SERVICE_PROJECT, roles)
            self.placement = KeystonePlacement(self.keystone, self.passwords['placement'], **self.placement_options)
            self.placement.start()
            self.keystone.register_service('placement', 'placement', self.placement.url)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        if self.placement is not None:
            self.placement.stop()
        self.keystone.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    @property
    def auth_url(self):
        return self.keystone.auth_url

    def auth_dict(self, user='placement', password=None, auth_url=None):
        """The ``auth`` dict of the ``password`` plugin for ``user``."""
        return {'auth_url': auth_url or self.auth_url, 'username': user,
                'password': self.passwords[user] if password is None else password,
                'project_name': SERVICE_PROJECT, 'user_domain_name': DOMAIN,
                'project_domain_name': DOMAIN}

    def password_auth(self, user='placement', password=None, auth_url=None):
        """Module options: password auth for ``user`` (Placement found in the catalog)."""
        return {'auth_type': 'password', 'region_name': REGION,
                'auth': self.auth_dict(user, password, auth_url)}

    def token(self, user='placement'):
        return self.keystone.issue_token(user, self.passwords[user])


_SHARED = []


def shared_stack():
    """The one :class:`KeystoneStack` of this process (started on first use, stopped at exit)."""
    if not _SHARED:
        import atexit

        stack = KeystoneStack().start()
        _SHARED.append(stack)
        atexit.register(stack.stop)
    return _SHARED[0]


# -- the keystone child process ------------------------------------------------
def _serve_keystone(workdir, port_file):
    import socketserver
    from wsgiref import simple_server

    import keystone.server
    from keystone.cmd.bootstrap import Bootstrapper
    from keystone.common.sql import upgrades
    from keystone.server.flask import application as ks_application
    from keystone.server.flask import core as ks_core

    sys.argv[1:] = []   # oslo.config parses the command line: ours is not keystone's
    keystone.server.configure(config_files=[os.path.join(workdir, 'keystone.conf')])
    upgrades.offline_sync_database_to_version()   # keystone-manage db_sync

    class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 64

    class Handler(simple_server.WSGIRequestHandler):
        def address_string(self):
            return self.client_address[0]

        def log_request(self, code='-', size='-'):
            pass

    def _not_yet(environ, start_response):
        start_response('503 Service Unavailable', [('Content-Type', 'text/plain')])
        return [b'starting']

    httpd = simple_server.make_server(LOOPBACK, 0, _not_yet, server_class=Server, handler_class=Handler)
    url = 'http://%s:%d' % httpd.server_address[:2]

    boot = Bootstrapper()                           # keystone-manage bootstrap
    boot.admin_password = os.environ['OS_BOOTSTRAP_PASSWORD']
    boot.admin_username = 'admin'
    boot.project_name = 'admin'
    boot.admin_role_name = 'admin'
    boot.service_name = 'keystone'
    boot.public_url = boot.internal_url = boot.admin_url = url + '/v3'
    boot.region_id = REGION
    boot.immutable_roles = True
    boot.bootstrap()

    httpd.set_app(ks_core.setup_app_middleware(ks_application.application_factory('public')))

    def _term(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _term)
    parent = os.getppid()

    def _watch_parent():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=_watch_parent, name='parent-watch', daemon=True).start()
    tmp = port_file + '.tmp'
    with open(tmp, 'w') as fh:
        fh.write('%d\n' % httpd.server_address[1])
    os.rename(tmp, port_file)
    sys.stderr.write('keystone serving on %s\n' % url)
    sys.stderr.flush()
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()


def _write_state(state_file, state):
    tmp = state_file + '.tmp'
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 'w') as handle:
        json.dump(state, handle)
    os.rename(tmp, state_file)


def _keystone_only(args):
    """Keystone alone: the user ``operator`` (roles OPERATOR_ROLES, project ``service``) and the
    catalog's ``--endpoint``s; the state file says how to authenticate; runs until SIGTERM/SIGINT."""
    endpoints = []
    for text in args.endpoint or ():
        service_type, sep, url = text.partition('=')
        if not sep or not service_type or not url:
            raise SystemExit('--endpoint wants TYPE=URL, not %r' % text)
        endpoints.append((service_type, url))
    keystone = KeystoneServer(workdir=args.workdir, password_hash_rounds=args.password_hash_rounds)
    password = secret('operator-pw')
    try:
        keystone.start()
        keystone.ensure_user('operator', password, SERVICE_PROJECT, OPERATOR_ROLES)
        for service_type, url in endpoints:
            keystone.register_service(service_type, service_type, url)
        if args.state_file:
            _write_state(args.state_file, {
                'pid': os.getpid(), 'keystone_pid': keystone.proc.pid, 'auth_url': keystone.auth_url,
                'log': keystone.log_path, 'password_hash_rounds': keystone.password_hash_rounds,
                'region_name': REGION, 'auth': {
                    'auth_url': keystone.auth_url, 'username': 'operator', 'password': password,
                    'project_name': SERVICE_PROJECT, 'user_domain_name': DOMAIN, 'project_domain_name': DOMAIN}})
        print('keystone at %s (log %s)' % (keystone.auth_url, keystone.log_path))
        sys.stdout.flush()
        while keystone.proc is not None and keystone.proc.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        keystone.stop()
        if args.state_file and os.path.exists(args.state_file):
            os.unlink(args.state_file)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--serve-keystone', nargs=2, metavar=('WORKDIR', 'PORT_FILE'),
                        help='(internal) run keystone from WORKDIR, write the port to PORT_FILE')
    parser.add_argument('--state-file', help='once both serve, write {pid, auth_url, placement_url, '
                                             'backend (password auth of the placement user)} there as JSON '
                                             '(mode 0600); it is removed when the stack stops.  With '
                                             '--keystone-only: {pid, keystone_pid, auth_url, log, '
                                             'password_hash_rounds, region_name, auth (of the user operator)}')
    parser.add_argument('--keystone-only', action='store_true',
                        help='start Keystone alone (no Placement) with the user operator (roles %s, project %s)'
                             % ('+'.join(OPERATOR_ROLES), SERVICE_PROJECT))
    parser.add_argument('--password-hash-rounds', type=int, default=FAST_HASH_ROUNDS,
                        help='with --keystone-only: bcrypt rounds of stored passwords (default %d; a '
                             'production Keystone uses %d)' % (FAST_HASH_ROUNDS, PRODUCTION_HASH_ROUNDS))
    parser.add_argument('--endpoint', action='append', metavar='TYPE=URL',
                        help='with --keystone-only: register service TYPE with this URL (all interfaces, '
                             'region %s); repeatable' % REGION)
    parser.add_argument('--workdir', help='with --keystone-only: Keystone\'s dir (config, db, log), kept at '
                                          'the end (default: a temp dir, removed)')
    args = parser.parse_args(argv)
    if args.serve_keystone:
        _serve_keystone(*args.serve_keystone)
        return 0

    def _stop(signum, frame):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    if args.keystone_only:
        return _keystone_only(args)
    stack = KeystoneStack()
    stack.start()
    print('keystone at %s (log %s)' % (stack.auth_url, stack.keystone.log_path))
    print('placement at %s (log %s)' % (stack.placement.url, stack.placement.log_path))
    print(json.dumps(stack.password_auth('placement')))
    if args.state_file:
        _write_state(args.state_file, {'pid': os.getpid(), 'auth_url': stack.auth_url, 'placement_url': stack.placement.url,
                                       'backend': stack.password_auth('placement')})
    sys.stdout.flush()
    try:
        while stack.placement.proc is not None and stack.placement.proc.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()
        if args.state_file and os.path.exists(args.state_file):
            os.unlink(args.state_file)
    return 0


if __name__ == '__main__':
    sys.exit(main())
