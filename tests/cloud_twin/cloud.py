# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's control plane: a whole OpenStack control plane on 127.0.0.1, one process per service.

    from cloud import Cloud
    with Cloud(run_dir) as cloud:            # ~1-2 min on 2 busy cores; cloud.timings says what took what
        cloud.clouds_yaml(path)              # password auth of the user ``operator``, catalog endpoints
        cloud.nova_manage('cell_v2', 'discover_hosts', '--verbose')
        cloud.placement_requests(user='nova')   # Placement's own request log, by Keystone user

What runs (each its own process group, started here, logs under ``run_dir``, stopped by pid):

* MariaDB (tests/db_servers.py ``MariaDBServer``, Debian mariadb-server 10.11): the databases
  keystone, placement, nova_api, nova_cell0 and nova (cell1), one account per service.
* RabbitMQ (tests/cloud_twin/rabbitmq.py, Debian rabbitmq-server 3.10): a private node.
* Keystone 30 (the project venv) under Debian's uWSGI (``uwsgi-core`` + ``uwsgi-plugin-python3``),
  2 processes, on MariaDB, fernet tokens, bcrypt at 12 rounds (production's cost); users ``nova``,
  ``placement`` (roles admin, service, project service), ``operator`` (admin, service, member,
  reader) and ``demo`` (member, project demo); the catalog's identity, placement and compute
  services with public and internal endpoints (identity also admin, as ``keystone-manage
  bootstrap`` makes it).
* Placement 16.0.0 (the project venv) under uWSGI, 4 processes, on MariaDB, behind
  keystonemiddleware ``auth_token`` (user ``placement``), its stock policy.  Its request log
  (``placement.requestlog`` at INFO, in ``placement/placement.log``) names the Keystone user id of
  every request: :meth:`Cloud.placement_requests` reads it.
* nova-api 34 (nova 34's venv) under uWSGI, 2 processes, behind keystonemiddleware (user ``nova``);
  nova-conductor 34 and nova-scheduler 34 (nova's own entry points, 1 worker each).  ``nova-manage
  api_db sync``, ``cell_v2 map_cell0``, ``cell_v2 create_cell --name cell1`` (transport_url to the
  broker), ``db sync`` ran before them.  ``[upgrade_levels] compute = auto`` (computes may be N-1).

Not real: there is no Glance; nova's functional ``GlanceFixture`` (nova's in-memory test images) is
applied in nova-api, nova-conductor and nova-scheduler (tests/cloud_twin/control.py) and must be in
the computes too.  No Neutron: guests boot with ``networks: none``.

uWSGI is shaped as devstack runs its APIs (``--master --lazy-apps --enable-threads --thunder-lock
--die-on-term --http-socket`` with ``--add-header 'Connection: close'``), on a listening socket this
process binds (``fd://N``, no pick-then-bind race; a restart keeps the port).  Debian's python3 plugin
embeds Debian's Python 3.11 and takes each venv's site-packages (with its ``.pth`` files) from the
WSGI file, as tests/placement_server.py does for Placement.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from urllib.request import Request, urlopen

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
for _path in (HERE, TESTS):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import rabbitmq  # noqa: E402
from server_util import authtoken_section, keystone_conf, killpg, secret, tail, write_keystone_keys  # noqa: E402

LOOPBACK = '127.0.0.1'
REGION = 'RegionOne'
DOMAIN = 'Default'
SERVICE_PROJECT = 'service'
MAIN_VENV = os.path.join(REPO, '.venv')
NOVA_VENV = os.environ.get('CLOUD_TWIN_NOVA_VENV', os.path.join(REPO, '.venv-nova'))
CONTROL = os.path.join(HERE, 'control.py')
#: what a production Keystone hashes passwords with (see tests/keystone_server.py PRODUCTION_HASH_ROUNDS)
PRODUCTION_HASH_ROUNDS = 12
#: the Python Debian's uwsgi-plugin-python3 (bookworm) embeds
UWSGI_PYTHON = '3.11'
#: nova's test image (nova/tests/fixtures/glance.py GlanceFixture.image1), what guests boot from
IMAGE_ID = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
#: (user, project, roles) made in Keystone
USERS = (
    ('nova', SERVICE_PROJECT, ('admin', 'service')),
    ('placement', SERVICE_PROJECT, ('admin', 'service')),
    ('operator', SERVICE_PROJECT, ('admin', 'service', 'member', 'reader')),
    ('demo', 'demo', ('member', 'reader')),
)
#: Placement's request log line (placement/requestlog.py, oslo.log's context format)
REQUEST_LINE = re.compile(r' INFO placement\.requestlog \[(?P<context>[^\]]*)\] (?P<addr>\S+) '
                          r'"(?P<method>[A-Z]+) (?P<uri>\S+)" status: (?P<status>\d+)')
WRITE_METHODS = frozenset(('PUT', 'POST', 'DELETE', 'PATCH'))


def _log_time(line):
    """The epoch seconds of an oslo.log line's leading ``YYYY-MM-DD HH:MM:SS.mmm`` (local time), or None."""
    try:
        return time.mktime(time.strptime(line[:19], '%Y-%m-%d %H:%M:%S')) + float('0' + line[19:23])
    except ValueError:
        return None


_PLACEMENT_CONF = """\
[DEFAULT]
debug = false
log_file = {workdir}/placement.log

[api]
auth_strategy = keystone

[placement_database]
connection = {db_url}
sync_on_startup = false

"""

_NOVA_CONF = """\
[DEFAULT]
debug = false
host = {host}
my_ip = 127.0.0.1
state_path = {state_path}
transport_url = {transport_url}
use_stderr = false

[api]
auth_strategy = keystone

[wsgi]
api_paste_config = {conf_dir}/api-paste.ini

[api_database]
connection = {api_db}

[database]
connection = {cell1_db}

[conductor]
workers = 1

[scheduler]
workers = 1
discover_hosts_in_cells_interval = -1

[upgrade_levels]
compute = auto

[oslo_concurrency]
lock_path = {state_path}/lock

[oslo_messaging_notifications]
driver = noop

[oslo_messaging_rabbit]
heartbeat_timeout_threshold = 60

[quota]
instances = -1
cores = -1
ram = -1

[placement]
auth_type = password
auth_url = {auth_url}
username = nova
password = {nova_password}
project_name = {project}
user_domain_name = {domain}
project_domain_name = {domain}
region_name = {region}
valid_interfaces = internal

[service_user]
send_service_user_token = true
auth_type = password
auth_url = {auth_url}
username = nova
password = {nova_password}
project_name = {project}
user_domain_name = {domain}
project_domain_name = {domain}

"""

#: a WSGI file for uWSGI: a venv's site-packages (with its .pth files), then the application
_WSGI_FILE = """\
import os, site
site.addsitedir({site})
os.environ.update({env})
{body}
"""


def default_run_dir(suffix='', env='CLOUD_TWIN_RUN_DIR'):
    """A run's folder: ``$env`` when set, else tests/output/cloud-twin/<UTC time>-<pid><suffix>/."""
    given = os.environ.get(env)
    if given:
        return given
    return os.path.join(REPO, 'tests', 'output', 'cloud-twin',
                        '%s-%d%s' % (time.strftime('%Y%m%dT%H%M%SZ', time.gmtime()), os.getpid(), suffix))


class CloudError(RuntimeError):
    """A service of the twin did not come up (its log is named)."""


def venv_site(python):
    """(site-packages, 'major.minor') of a venv's interpreter."""
    out = subprocess.run([python, '-c', 'import sys, sysconfig; print(sysconfig.get_paths()["purelib"]); '
                          'print("%d.%d" % sys.version_info[:2])'], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout.split('\n')
    return out[0], out[1]


class Process(object):
    """A service process in a session of its own; stopped by SIGTERM to its pid, SIGKILL to its group."""

    def __init__(self, name, command, log_path, env=None, cwd=None, pass_fds=(), stop_timeout=20.0):
        self.name = name
        self.command = command
        self.log_path = log_path
        self.env = env
        self.cwd = cwd
        self.pass_fds = tuple(pass_fds)
        self.stop_timeout = stop_timeout
        self.proc = None
        self._out = None

    @property
    def pid(self):
        return None if self.proc is None else self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        self._out = open(self.log_path, 'ab')
        self.proc = subprocess.Popen(self.command, stdout=self._out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                                     pass_fds=self.pass_fds, start_new_session=True)
        return self

    def check(self):
        if not self.alive():
            raise CloudError('%s exited (rc %s), see %s; it ends with:\n%s'
                             % (self.name, None if self.proc is None else self.proc.returncode,
                                self.log_path, tail(self.log_path)))

    def stop(self, sig=signal.SIGTERM):
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    proc.send_signal(sig)
                    proc.wait(self.stop_timeout)
                except subprocess.TimeoutExpired:
                    pass
            killpg(proc.pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.wait(10)
        if self._out is not None:
            self._out.close()
            self._out = None


class UwsgiService(object):
    """A WSGI application under Debian's uWSGI on a socket bound here (the port survives restarts)."""

    def __init__(self, name, workdir, python, body, processes, env=None, ready_path='/'):
        self.name = name
        self.workdir = workdir
        self.python = python
        self.body = body
        self.processes = processes
        self.env = dict(env or {})
        self.ready_path = ready_path
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((LOOPBACK, 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        self.url = 'http://%s:%d' % (LOOPBACK, self.port)
        self.process = None

    @property
    def log_path(self):
        return os.path.join(self.workdir, 'uwsgi.log')

    @property
    def pid(self):
        return None if self.process is None else self.process.pid

    def command(self):
        binary = shutil.which('uwsgi') or shutil.which('uwsgi-core')
        if binary is None:
            raise CloudError('uwsgi is not installed: `make deps` installs uwsgi-core and uwsgi-plugin-python3')
        site, version = venv_site(self.python)
        if version != UWSGI_PYTHON:
            raise CloudError("Debian's uwsgi python3 plugin embeds Python %s; %s is %s"
                             % (UWSGI_PYTHON, self.python, version))
        app = os.path.join(self.workdir, '%s_wsgi.py' % self.name)
        with open(app, 'w') as fh:
            fh.write(_WSGI_FILE.format(site=json.dumps(site), env=json.dumps(self.env), body=self.body))
        fd = self.listener.fileno()
        return [binary, '--plugin', 'python3', '--pythonpath', site, '--http-socket', 'fd://%d' % fd,
                '--master', '--processes', str(self.processes), '--enable-threads', '--thunder-lock',
                '--lazy-apps', '--die-on-term', '--need-app', '--buffer-size', '65535',
                '--add-header', 'Connection: close', '--chdir', self.workdir,
                '--procname-prefix', '%s-' % self.name, '--wsgi-file', app]

    def start(self, timeout=180.0):
        env = dict(os.environ)
        env.update(self.env)
        env['NO_PROXY'] = env['no_proxy'] = LOOPBACK + ',localhost'
        self.process = Process(self.name, self.command(), self.log_path, env=env, cwd=self.workdir,
                               pass_fds=(self.listener.fileno(),))
        self.process.start()
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout=180.0):
        deadline = time.monotonic() + timeout
        last = None
        while True:
            self.process.check()
            try:
                with urlopen(Request(self.url + self.ready_path), timeout=10) as resp:
                    resp.read()
                    return
            except Exception as exc:  # pylint: disable=broad-except  # not up yet (uWSGI queues; app imports)
                code = getattr(exc, 'code', None)
                if code is not None and code < 500:
                    return           # it answers (e.g. 401 without a token): the app is loaded
                last = exc
            if time.monotonic() > deadline:
                raise CloudError('%s at %s did not answer GET %s within %ss (%s), see %s:\n%s'
                                 % (self.name, self.url, self.ready_path, timeout, last, self.log_path,
                                    tail(self.log_path)))
            time.sleep(0.2)

    def reload(self, timeout=180.0):
        """uWSGI's graceful reload (SIGHUP to the master, as a unit's ExecReload sends it: workers finish,
        the master execs itself again on the same socket, new workers load the app).  (With
        ``--exit-on-reload``, which the command no longer has, SIGHUP ended uWSGI instead.)"""
        began = time.monotonic()
        os.kill(self.process.pid, signal.SIGHUP)
        time.sleep(0.5)
        self.wait_ready(timeout)
        return time.monotonic() - began

    def stop(self):
        if self.process is not None:
            self.process.stop(signal.SIGTERM)     # --die-on-term: the master stops its workers
            self.process = None

    def close(self):
        self.stop()
        self.listener.close()

    def pause(self):
        """Stop serving (the socket stays bound and listening: clients wait, then time out)."""
        self.stop()

    def resume(self, timeout=180.0):
        self.process = None
        return self.start(timeout)


class Cloud(object):
    """The twin's control plane; see the module doc.  ``timings``: seconds per service start."""

    def __init__(self, run_dir, nova_venv=NOVA_VENV, main_venv=MAIN_VENV, keystone_rounds=PRODUCTION_HASH_ROUNDS,
                 placement_processes=4, api_processes=2, keystone_processes=2):
        self.run_dir = os.path.abspath(run_dir)
        self.nova_venv = nova_venv
        self.main_venv = main_venv
        self.keystone_rounds = keystone_rounds
        self.placement_processes = placement_processes
        self.api_processes = api_processes
        self.keystone_processes = keystone_processes
        self.passwords = dict((user, secret(user)) for user, _p, _r in USERS)
        self.passwords['admin'] = secret('admin')
        self.db_passwords = dict((name, secret('db-' + name)) for name in ('keystone', 'placement', 'nova'))
        self.db = None
        self.broker = None
        self.keystone = None
        self.placement = None
        self.nova_api = None
        self.conductor = None
        self.scheduler = None
        self.timings = {}
        self.user_ids = {}
        #: node directories whose nova-compute was started (tests/cloud_twin/novactl.py), stopped first
        self.started_nodes = []
        self._admin_session = None

    # -- paths and URLs --------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.run_dir, *parts)

    @property
    def python(self):
        return os.path.join(self.main_venv, 'bin', 'python')

    @property
    def nova_python(self):
        return os.path.join(self.nova_venv, 'bin', 'python')

    @property
    def auth_url(self):
        return self.keystone.url + '/v3'

    def db_url(self, database, user):
        return 'mysql+pymysql://%s:%s@%s:%d/%s?charset=utf8' % (
            user, self.db_passwords[user], LOOPBACK, self.db.port, database)

    @property
    def nova_conf_dir(self):
        return self.path('nova')

    @property
    def nova_conf(self):
        return self.path('nova', 'nova.conf')

    # -- lifecycle -------------------------------------------------------------
    def start(self):
        for tool, hint in ((self.python, 'make venv'),
                           (self.nova_python, '.ci/nova-venv.sh .venv-nova tests/nova_oracle/requirements.txt')):
            if not os.access(tool, os.X_OK):
                raise CloudError('%s is missing: run %s' % (tool, hint))
        os.makedirs(self.run_dir, exist_ok=True)
        try:
            began = time.monotonic()
            broker_error = []
            self.broker = rabbitmq.RabbitMQ(self.path('rabbitmq'))

            def _broker():
                try:
                    self.broker.start()
                except BaseException as exc:  # pylint: disable=broad-except  # re-raised below
                    broker_error.append(exc)
            broker_thread = threading.Thread(target=_broker, name='rabbitmq-start', daemon=True)
            broker_thread.start()
            self._start_db()
            self._start_keystone()
            self._start_placement()
            broker_thread.join()
            if broker_error:
                raise broker_error[0]
            self.timings['rabbitmq'] = self.broker.timings['start']
            self._start_nova()
            self.timings['total'] = time.monotonic() - began
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Stop every process started here, newest first, by pid (the nodes' nova-compute first).  Idempotent."""
        if self.started_nodes:
            import novactl
            for node in self.started_nodes:
                try:
                    novactl.stop(node)
                except Exception as exc:  # pylint: disable=broad-except  # stop the rest anyway
                    sys.stderr.write('cloud twin: stopping %s: %s\n' % (node, exc))
        for name in ('scheduler', 'conductor'):
            proc = getattr(self, name)
            if proc is not None:
                proc.stop()
        for name in ('nova_api', 'placement', 'keystone'):
            svc = getattr(self, name)
            if svc is not None:
                svc.close()
        if self.broker is not None:
            self.broker.stop()
        if self.db is not None:
            self.db.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def pids(self):
        """{service: pid} of every process of the control plane running now."""
        found = {}
        if self.db is not None and self.db.running:
            found['mariadb'] = self.db.pid
        if self.broker is not None:
            found.update(self.broker.pids)
        for name in ('keystone', 'placement', 'nova_api'):
            svc = getattr(self, name)
            if svc is not None and svc.process is not None and svc.process.alive():
                found[name] = svc.pid
        for name in ('conductor', 'scheduler'):
            proc = getattr(self, name)
            if proc is not None and proc.alive():
                found['nova-' + name] = proc.pid
        return found

    # -- MariaDB ---------------------------------------------------------------
    def _start_db(self):
        import db_servers
        began = time.monotonic()
        self.db = db_servers.MariaDBServer(workdir=self.path('mariadb'), database='keystone', user='keystone',
                                           password=self.db_passwords['keystone'])
        self.db.start()
        conn = self.db.admin(autocommit=True)
        try:
            with conn.cursor() as cur:
                for database, user in (('placement', 'placement'), ('nova_api', 'nova'), ('nova_cell0', 'nova'),
                                       ('nova', 'nova')):
                    cur.execute('CREATE DATABASE `%s` CHARACTER SET utf8' % database)
                    for host in (LOOPBACK, 'localhost'):
                        cur.execute('CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s',
                                    (user, host, self.db_passwords[user]))
                        cur.execute('GRANT ALL PRIVILEGES ON `%s`.* TO %%s@%%s' % database, (user, host))
        finally:
            conn.close()
        self.timings['mariadb'] = time.monotonic() - began

    # -- Keystone --------------------------------------------------------------
    def _start_keystone(self):
        began = time.monotonic()
        workdir = self.path('keystone')
        os.makedirs(workdir, exist_ok=True)
        with open(os.path.join(workdir, 'keystone.conf'), 'w') as fh:
            fh.write(keystone_conf(workdir, self.db_url('keystone', 'keystone'), self.keystone_rounds,
                                   default=('debug = false', 'log_file = %s/keystone.log' % workdir)))
        write_keystone_keys(workdir)
        self.keystone = UwsgiService('keystone', workdir, self.python,
                                     'from keystone.wsgi.api import application  # noqa: F401',
                                     self.keystone_processes, env={'OS_KEYSTONE_CONFIG_DIR': workdir},
                                     ready_path='/v3')
        env = dict(os.environ, OS_BOOTSTRAP_PASSWORD=self.passwords['admin'])
        self._run([self.python, CONTROL, 'keystone-prep', workdir, self.keystone.url + '/v3'],
                  os.path.join(workdir, 'keystone-prep.log'), 'keystone db_sync + bootstrap', env=env)
        self.timings['keystone_prep'] = time.monotonic() - began
        self.keystone.start()
        self.timings['keystone'] = time.monotonic() - began
        began = time.monotonic()
        self._keystone_users()
        self.timings['keystone_users'] = time.monotonic() - began

    def admin_session(self):
        if self._admin_session is None:
            self._admin_session = self.session('admin', project='admin')
        return self._admin_session

    def session(self, user, password=None, project=None):
        from keystoneauth1 import session as ks_session
        from keystoneauth1.identity import v3
        project = project or dict((u, p) for u, p, _r in USERS).get(user, 'admin')
        auth = v3.Password(auth_url=self.auth_url, username=user,
                           password=self.passwords[user] if password is None else password,
                           project_name=project, user_domain_name=DOMAIN, project_domain_name=DOMAIN)
        return ks_session.Session(auth=auth, timeout=60)

    def identity(self, method, path, body=None):
        resp = self.admin_session().request(self.auth_url + path, method, json=body, raise_exc=True)
        return resp.json() if resp.content else None

    def _keystone_users(self):
        roles = dict((r['name'], r['id']) for r in self.identity('GET', '/roles')['roles'])
        projects = {}
        for user, project, user_roles in USERS:
            if project not in projects:
                projects[project] = self.identity('POST', '/projects', {'project': {
                    'name': project, 'domain_id': 'default'}})['project']['id']
            user_id = self.identity('POST', '/users', {'user': {
                'name': user, 'password': self.passwords[user], 'domain_id': 'default',
                'default_project_id': projects[project]}})['user']['id']
            self.user_ids[user] = user_id
            for role in user_roles:
                self.identity('PUT', '/projects/%s/users/%s/roles/%s' % (projects[project], user_id, roles[role]))
        self.project_ids = projects

    def register_service(self, service_type, name, url, interfaces=('public', 'internal')):
        service = self.identity('POST', '/services', {'service': {'type': service_type, 'name': name}})['service']
        for interface in interfaces:
            self.identity('POST', '/endpoints', {'endpoint': {
                'service_id': service['id'], 'interface': interface, 'url': url, 'region_id': REGION}})
        return service['id']

    def _authtoken(self, user):
        return dict(auth_url=self.auth_url, user=user, password=self.passwords[user], project=SERVICE_PROJECT,
                    domain=DOMAIN, region=REGION)

    def _authtoken_section(self, user):
        """[keystone_authtoken] of an API of this cloud, as the service user ``user`` (its internal endpoints)."""
        return authtoken_section(self.auth_url, user, self.passwords[user], SERVICE_PROJECT, DOMAIN, REGION,
                                 extra=('interface = internal',))

    # -- Placement -------------------------------------------------------------
    def _start_placement(self):
        began = time.monotonic()
        workdir = self.path('placement')
        os.makedirs(workdir, exist_ok=True)
        values = self._authtoken('placement')
        values.update(workdir=workdir, db_url=self.db_url('placement', 'placement'))
        with open(os.path.join(workdir, 'placement.conf'), 'w') as fh:
            fh.write(_PLACEMENT_CONF.format(**values) + self._authtoken_section('placement'))
        env = {'OS_PLACEMENT_CONFIG_DIR': workdir}
        self._run([self.python, '-c', 'import sys; from placement.cmd.manage import main; sys.exit(main())',
                   '--config-file', os.path.join(workdir, 'placement.conf'), 'db', 'sync'],
                  os.path.join(workdir, 'db-sync.log'), 'placement-manage db sync', env=dict(os.environ, **env))
        self.placement = UwsgiService('placement', workdir, self.python,
                                      'from placement.wsgi.api import application  # noqa: F401',
                                      self.placement_processes, env=env)
        self.placement.start()
        self.register_service('placement', 'placement', self.placement.url)
        self.timings['placement'] = time.monotonic() - began

    @property
    def placement_log(self):
        return self.path('placement', 'placement.log')

    def placement_log_size(self):
        try:
            return os.path.getsize(self.placement_log)
        except OSError:
            return 0

    def placement_requests(self, user=None, since=0, writes_only=False):
        """Placement's request log from byte ``since``: [{'method', 'uri', 'status', 'context', 'at', 'line'}]
        (``at``: the line's time, epoch seconds; Placement logs local time, as this process reads it),
        only those of Keystone user ``user`` (a name of USERS) when given, only PUT/POST/DELETE/PATCH
        with ``writes_only``."""
        user_id = self.user_ids.get(user) if user else None
        found = []
        with open(self.placement_log, 'rb') as fh:
            fh.seek(since)
            for raw in fh:
                line = raw.decode('utf-8', 'replace')
                match = REQUEST_LINE.search(line)
                if not match:
                    continue
                context = match.group('context').split()
                if user_id is not None and user_id not in context:
                    continue
                if writes_only and match.group('method') not in WRITE_METHODS:
                    continue
                found.append({'method': match.group('method'), 'uri': match.group('uri'),
                              'status': int(match.group('status')), 'context': context,
                              'at': _log_time(line), 'line': line.rstrip()})
        return found

    # -- nova ------------------------------------------------------------------
    def nova_conf_text(self, host='controller', state_path=None):
        """nova.conf of a service of this cloud (the computes add their own sections after it)."""
        values = self._authtoken('nova')
        values.update(host=host, state_path=state_path or self.path('nova', 'state'),
                      transport_url=self.broker.transport_url, conf_dir=self.nova_conf_dir,
                      api_db=self.db_url('nova_api', 'nova'), cell1_db=self.db_url('nova', 'nova'),
                      nova_password=self.passwords['nova'])
        return _NOVA_CONF.format(**values) + self._authtoken_section('nova')

    def _start_nova(self):
        began = time.monotonic()
        conf_dir = self.nova_conf_dir
        os.makedirs(os.path.join(conf_dir, 'state', 'lock'), exist_ok=True)
        shutil.copy(os.path.join(self.nova_venv, 'etc', 'nova', 'api-paste.ini'),
                    os.path.join(conf_dir, 'api-paste.ini'))
        with open(self.nova_conf, 'w') as fh:
            fh.write(self.nova_conf_text())
        self.nova_manage('api_db', 'sync')
        self.nova_manage('cell_v2', 'map_cell0', '--database_connection', self.db_url('nova_cell0', 'nova'))
        self.nova_manage('cell_v2', 'create_cell', '--name', 'cell1', '--verbose')
        self.nova_manage('db', 'sync')
        self.timings['nova_manage'] = time.monotonic() - began
        began = time.monotonic()
        env = dict(os.environ, NO_PROXY='127.0.0.1,localhost', no_proxy='127.0.0.1,localhost')
        self.conductor = Process('nova-conductor', [self.nova_python, CONTROL, 'nova', 'conductor',
                                                    '--config-file', self.nova_conf,
                                                    '--log-file', self.path('nova', 'nova-conductor.log')],
                                 self.path('nova', 'nova-conductor.out'), env=env, cwd=conf_dir).start()
        self.scheduler = Process('nova-scheduler', [self.nova_python, CONTROL, 'nova', 'scheduler',
                                                    '--config-file', self.nova_conf,
                                                    '--log-file', self.path('nova', 'nova-scheduler.log')],
                                 self.path('nova', 'nova-scheduler.out'), env=env, cwd=conf_dir).start()
        api_dir = self.path('nova-api')
        os.makedirs(api_dir, exist_ok=True)
        body = ('import sys\nsys.path.insert(0, %s)\n'
                'from nova.wsgi.osapi_compute import application  # noqa: F401  (nova patches first)\n'
                'import control\ncontrol.stub_image_service()' % json.dumps(HERE))
        self.nova_api = UwsgiService('nova-api', api_dir, self.nova_python, body, self.api_processes,
                                     env={'OS_NOVA_CONFIG_DIR': conf_dir}, ready_path='/')
        self.nova_api.start()
        self.register_service('compute', 'nova', self.nova_api.url + '/v2.1')
        self.timings['nova_api'] = time.monotonic() - began
        self.wait_services(('nova-conductor', 'nova-scheduler'), timeout=180)
        self.timings['nova_control'] = time.monotonic() - began

    def nova_manage(self, *args, **kwargs):
        """Run ``nova-manage --config-file nova.conf ARGS`` (nova 34); returns the CompletedProcess."""
        return self.nova_tool('nova-manage', *args, **kwargs)

    def nova_tool(self, tool, *args, **kwargs):
        check = kwargs.pop('check', True)
        cmd = [os.path.join(self.nova_venv, 'bin', tool), '--config-file', self.nova_conf] + list(args)
        env = dict(os.environ, NO_PROXY='127.0.0.1,localhost', no_proxy='127.0.0.1,localhost')
        result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                env=env, cwd=self.nova_conf_dir, timeout=kwargs.pop('timeout', 600), check=False)
        with open(self.path('nova', 'nova-manage.log'), 'a') as fh:
            fh.write('$ %s\n%s\n(rc %d)\n' % (' '.join(cmd[:1] + list(args)), result.stdout, result.returncode))
        if check and result.returncode != 0:
            raise CloudError('%s %s failed (rc %d):\n%s' % (tool, ' '.join(args), result.returncode,
                                                            result.stdout[-3000:]))
        return result

    def compute_session(self, user='admin'):
        return self.admin_session() if user == 'admin' else self.session(user)

    def services(self):
        """nova's os-services (as the admin, microversion 2.53)."""
        resp = self.admin_session().get(self.nova_api.url + '/v2.1/os-services',
                                        headers={'OpenStack-API-Version': 'compute 2.53'}, raise_exc=True)
        return resp.json()['services']

    def wait_services(self, binaries, timeout=180, hosts=None):
        """Wait until every ``binaries`` service (of ``hosts``, if given) is up in nova's os-services."""
        deadline = time.monotonic() + timeout
        while True:
            for proc in (self.conductor, self.scheduler):
                if proc is not None:
                    proc.check()
            up = set((s['binary'], s['host']) for s in self.services() if s['state'] == 'up')
            wanted = set()
            for binary in binaries:
                for host in (hosts or [None]):
                    wanted.add((binary, host))
            missing = [(b, h) for b, h in wanted if not any(b == ub and (h is None or h == uh) for ub, uh in up)]
            if not missing:
                return
            if time.monotonic() > deadline:
                raise CloudError('not up in nova after %ss: %s' % (timeout, missing))
            time.sleep(1.0)

    # -- clients ---------------------------------------------------------------
    def cloud_config(self, user='operator', interface='internal'):
        """The clouds.yaml entry of ``user``: password auth, endpoints from the catalog, no admin_token."""
        project = dict((u, p) for u, p, _r in USERS).get(user, 'admin')
        return {'auth_type': 'password', 'region_name': REGION, 'interface': interface,
                'identity_api_version': 3,
                'auth': {'auth_url': self.auth_url, 'username': user, 'password': self.passwords[user],
                         'project_name': project, 'user_domain_name': DOMAIN, 'project_domain_name': DOMAIN}}

    def clouds_yaml(self, path, name='twin', user='operator'):
        """Write a clouds.yaml (JSON is YAML) with cloud ``name`` for ``user``; returns the path."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, 'w') as fh:
            json.dump({'clouds': {name: self.cloud_config(user)}}, fh, indent=1)
        return path

    def connect(self, user='operator'):
        import openstack
        return openstack.connect(**self.cloud_config(user))

    # -- helpers ---------------------------------------------------------------
    def _run(self, cmd, log, what, env=None, timeout=600):
        with open(log, 'ab') as out:
            rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, timeout=timeout)
        if rc != 0:
            raise CloudError('%s failed (rc %s), see %s; it ends with:\n%s' % (what, rc, log, tail(log)))


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description='start the cloud twin\'s control plane until Ctrl-C')
    parser.add_argument('run_dir')
    parser.add_argument('--clouds-yaml', help='write a clouds.yaml (cloud "twin", user operator) here')
    args = parser.parse_args(argv)
    cloud = Cloud(args.run_dir)

    def _stop(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        cloud.start()
        if args.clouds_yaml:
            cloud.clouds_yaml(args.clouds_yaml)
        print(json.dumps({'timings': cloud.timings, 'pids': cloud.pids(), 'auth_url': cloud.auth_url}, indent=1))
        sys.stdout.flush()
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        cloud.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
