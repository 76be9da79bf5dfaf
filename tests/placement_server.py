# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start the REAL OpenStack Placement service on 127.0.0.1, for tests and benchmarks.

Usage::

    from placement_server import PlacementServer
    with PlacementServer() as server:          # temp dir, db sync, serve, wait
        print(server.url, server.log_path)
        ...                                     # stopped (terminate, then kill) on exit

    with PlacementServer(db='mariadb', workers=4) as server:   # production-shaped, see below
        print(server.url, server.db_server.url, server.deadlock_counts())

    python tests/placement_server.py            # run one by hand until Ctrl-C
    python tests/placement_server.py --db mariadb --workers 4
    python tests/placement_server.py --db mariadb --workers 4 --wsgi-server uwsgi

What it does: makes a temp dir holding ``placement.conf`` (``[api] auth_strategy =
noauth2``, SQLite ``placement.db``), ``policy.yaml`` and ``placement.log``; runs
``placement-manage --config-file placement.conf db sync``; then serves
``placement.wsgi.api:application`` (``OS_PLACEMENT_CONFIG_DIR`` = the temp dir) with a
threaded ``wsgiref`` server in a SUBPROCESS bound to 127.0.0.1 on a port the kernel picks
(the child reports it back through a file, so there is no pick-then-bind race), and waits
until ``GET /`` answers.  Only 127.0.0.1 is ever bound.

Production-shaped: MariaDB or PostgreSQL, gunicorn workers
    ``db='mariadb'`` or ``db='postgresql'`` starts a private database server of that kind
    (:mod:`db_servers`: its own temp dir, 127.0.0.1 only) before Placement and stops it
    after; ``db_server=`` uses one somebody else started (not stopped here).  ``workers=N``
    with N > 1 serves with gunicorn (``--workers N --preload``, sync workers, as uWSGI's
    default of loading the app before forking) instead of wsgiref; ``workers`` defaults to 4
    with a server database and to 1 (wsgiref) with SQLite.  The parent binds the listening
    socket on 127.0.0.1:0 and hands it to gunicorn (``--bind fd://N``): no pick-then-bind
    race, and :meth:`PlacementServer.restart` keeps the port.  gunicorn runs in its own
    process group (the master's pid), stopped by SIGTERM to the master, then SIGKILL to that
    group.  ``log_db_retries=True`` adds ``oslo_db.api=DEBUG`` to ``default_log_levels``, so
    oslo.db's deadlock retries ("Performing DB retry for function ...") reach placement.log;
    :meth:`PlacementServer.deadlock_counts` counts them and the database's deadlocks.

uWSGI instead of gunicorn: ``wsgi_server='uwsgi'`` (issue 28)
    serves with Debian's prebuilt uWSGI (``uwsgi-core`` + ``uwsgi-plugin-python3``, bindep.txt)
    and ``workers`` processes, shaped as devstack runs Placement (``--master``, ``--lazy-apps``,
    ``--enable-threads``, ``--thunder-lock``, ``--die-on-term``, ``--buffer-size 65535``) on
    ``--http-socket fd://N`` (the socket the parent bound, as for gunicorn).  Debian's python3
    plugin embeds Debian's Python 3.11 (its own stdlib) and takes this venv's packages from
    ``--pythonpath`` and a WSGI file that runs the venv's ``.pth`` files; the venv's Python must
    be 3.11 too (checked).  Not ``--virtualenv``: with a pyenv venv, Debian's libpython then
    loads pyenv's stdlib and fails (``_ssl``: undefined symbol).  ``uwsgi_connection_close=False`` (the
    default) leaves out devstack's ``--add-header 'Connection: close'``: uWSGI's http-socket
    closes every connection after its answer without saying so, and a client that reuses the
    connection meanwhile is reset (the configuration docs/reliability.md (g) reshapes against);
    ``True`` adds the header.

Authentication (noauth2, see ``placement/auth.py`` ``NoAuthMiddleware``)
    ``X-Auth-Token: user[:project]`` names the user (and project; the project defaults to
    the user).  Roles come from the ``X-Roles`` header; without it the user ``admin`` gets
    the role ``admin`` and every other user gets NO role.  ``GET /`` needs no token.

Why the policy file
    Placement's default policy gives ``placement:reshaper:reshape`` to the ``service``
    role only (every other API is ``role:admin or role:service``).  An Ansible module
    talks through openstacksdk and cannot add an ``X-Roles`` header, so with the default
    policy a playbook could never reshape against this test server.  ``policy.yaml``
    therefore grants ``placement:reshaper:reshape: "role:admin or role:service"``; a
    real cloud keeps the default and the operator's credentials need the ``service``
    role.  Pass ``reshape_policy=None`` to run with the stock policy.

    A user without admin/service (``X-Auth-Token: operator:proj`` + ``X-Roles: member``,
    or ``reader``) may do nothing but ``GET /``: every provider/inventory/allocation/trait/
    resource-class call is ``role:admin or role:service`` and answers 403; only
    ``GET /usages?project_id=<own project>`` is open to the project ``reader`` role.

How openstacksdk (and so a playbook task) reaches this server
    Module options, as returned by :meth:`PlacementServer.module_auth`::

        auth_type: admin_token
        auth:
          token: admin
          endpoint: http://127.0.0.1:PORT

    keystoneauth's ``admin_token`` plugin is a ``token_endpoint.Token``: it sends
    ``X-Auth-Token: admin`` and returns ``endpoint`` for EVERY service type, so
    ``conn.placement`` resolves to this URL without a service catalog; no
    ``placement_endpoint_override`` is needed (checked with openstacksdk 4.22 /
    keystoneauth1 5.18: ``RestBackend.from_options`` with exactly these options
    negotiates 1.39 and lists providers).  ``placement_endpoint_override: URL`` is
    harmless and still works if given through a clouds.yaml.  The token ``admin`` has
    the role ``admin`` only, which is why the reshape policy above is needed.

    In-process tests that need other roles build a keystoneauth Adapter with
    ``additional_headers={'X-Roles': ...}`` (see :meth:`PlacementServer.adapter`).

Command-line (the wsgiref child): ``python placement_server.py --serve CONFIG_DIR PORT_FILE``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from urllib.request import Request, urlopen

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from server_util import killpg, tail  # noqa: E402

LOOPBACK = '127.0.0.1'

#: The policy override written next to placement.conf (see the module docstring).
RESHAPE_POLICY = 'role:admin or role:service'

#: The Python Debian's uwsgi-plugin-python3 (bookworm) embeds: the venv's must be the same minor version.
UWSGI_PYTHON = '3.11'

#: The WSGI file uWSGI loads: the venv's site-packages with its .pth files (namespace packages), then Placement.
_UWSGI_APP = """\
import site
site.addsitedir({site})
from placement.wsgi.api import application  # noqa: E402,F401
"""

#: What oslo.db logs (at DEBUG, logger oslo_db.api) before it retries a deadlocked transaction.
DB_RETRY_LINE = 'Performing DB retry for function'

_CONF_TEMPLATE = """\
[DEFAULT]
debug = {debug}
use_stderr = true
{log_levels}
[api]
auth_strategy = noauth2

[placement_database]
connection = {db_url}
sync_on_startup = false

[oslo_policy]
policy_file = {policy_file}
"""


class PlacementServerError(RuntimeError):
    """The server could not be prepared or did not come up (the log is named)."""


class LoopbackService(object):
    """A child process serving HTTP on 127.0.0.1 from its own work dir (config, log, port file).

    What Placement here and Keystone (keystone_server.py) share: the child reports the port
    the kernel gave it through a file, and the service is ready once ``READY_PATH`` answers
    JSON.  A subclass sets ``NAME``, ``READY_PATH``, ``ERROR``, ``LOG_NAME``, ``DIR_PREFIX`` and
    provides ``_write_config()``, ``_command(port_file)`` and ``_env()``; ``_prepare()`` runs
    after the config is written and before the child starts.
    """

    NAME = 'service'
    READY_PATH = '/'
    ERROR = RuntimeError
    LOG_NAME = 'service.log'
    DIR_PREFIX = 'loopback-service-'

    def _init_process(self, workdir, python, start_timeout, keep=False):
        self.external = False
        self._own_dir = workdir is None
        self.workdir = os.path.abspath(workdir) if workdir else None
        self.keep = keep
        self.python = python or sys.executable
        self.start_timeout = start_timeout
        self.port = None
        self.url = None
        self.proc = None
        self._log = None

    @property
    def log_path(self):
        return None if self.workdir is None else os.path.join(self.workdir, self.LOG_NAME)

    # -- lifecycle --------------------------------------------------------
    def start(self):
        if self.proc is not None or self.external:
            return self
        if self.workdir is None:
            self.workdir = tempfile.mkdtemp(prefix=self.DIR_PREFIX)
        else:
            os.makedirs(self.workdir, exist_ok=True)
        self._write_config()
        self._log = open(self.log_path, 'ab')
        try:
            self._prepare()
            self._spawn()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Terminate the child (kill after 10 s); remove an own temp dir unless keep. Idempotent."""
        proc, self.proc = self.proc, None
        _db_servers().stop_process(proc)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_dir and not self.keep and self.workdir and os.path.isdir(self.workdir):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _prepare(self):
        """Hook: work to do once the config is written, before the child starts."""

    def _port_file(self):
        return os.path.join(self.workdir, 'port')

    def _spawn(self):
        port_file = self._port_file()
        if os.path.exists(port_file):
            os.unlink(port_file)
        self.proc = subprocess.Popen(self._command(port_file), stdout=self._log, stderr=subprocess.STDOUT,
                                     env=self._env(), close_fds=True)

    def _fail(self, what):
        raise self.ERROR('%s %s, see %s; its log ends with:\n%s' % (self.NAME, what, self.log_path, tail(self.log_path)))

    def _check_alive(self):
        if self.proc is None or self.proc.poll() is not None:
            self._fail('exited (rc %s)' % (None if self.proc is None else self.proc.returncode))

    def _wait_ready(self):
        deadline = time.monotonic() + self.start_timeout
        port_file = self._port_file()
        while self.port is None or self.url is None:
            self._check_alive()
            if os.path.exists(port_file):
                with open(port_file) as fh:
                    text = fh.read().strip()
                if text:
                    self.port = int(text)
                    self.url = 'http://%s:%d' % (LOOPBACK, self.port)
                    break
            if time.monotonic() > deadline:
                self._fail('did not report its port within %ss' % self.start_timeout)
            time.sleep(0.05)
        last = None
        while True:
            self._check_alive()
            try:
                with urlopen(Request(self.url + self.READY_PATH), timeout=5) as resp:
                    json.loads(resp.read().decode('utf-8'))
                    return
            except Exception as exc:  # pylint: disable=broad-except  # refused while it imports, etc.
                last = exc
            if time.monotonic() > deadline:
                self._fail('at %s did not answer GET %s (%s)' % (self.url, self.READY_PATH, last))
            time.sleep(0.05)


def _parent_death_signal(sig):
    """A ``preexec_fn`` asking the kernel to send ``sig`` to the child when we die (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    import ctypes
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec():
        prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
    return preexec


def count_db_retries(log_path):
    """oslo.db's deadlock retries in a placement.log: ``{function: count}`` (needs ``log_db_retries``)."""
    found = collections.Counter()
    pattern = re.compile(re.escape(DB_RETRY_LINE) + r' (\S+)')
    try:
        with open(log_path, 'r', errors='replace') as fh:
            for line in fh:
                match = pattern.search(line)
                if match:
                    found[match.group(1)] += 1
    except (OSError, TypeError):
        pass
    return dict(found)


class PlacementServer(LoopbackService):
    """One real Placement on 127.0.0.1 with its own temp dir and (by default) SQLite db.

    ``workdir``: directory to use (created; kept on stop) instead of a fresh temp dir
    (removed on stop unless ``keep=True``).  ``db_url``: a SQLAlchemy URL instead of the
    SQLite file (e.g. PostgreSQL for benchmarks).  ``db``: ``'mariadb'`` or ``'postgresql'``
    starts (and stops) a private database server of that kind (``db_server_options``: its
    constructor's arguments, e.g. ``keep=True``); ``db_server``: a started one to use.
    ``workers``: N > 1 serves with gunicorn and N worker processes, 1 with threaded wsgiref;
    None (default) means 4 with a server database and 1 with SQLite.  ``wsgi_server``:
    ``'uwsgi'`` serves with uWSGI and ``workers`` processes instead (see the module doc;
    ``uwsgi_connection_close`` adds ``Connection: close`` to every answer).  ``log_db_retries``:
    log oslo.db's deadlock retries (see the module doc).  ``reshape_policy``: check string
    for ``placement:reshaper:reshape`` or None for Placement's default (service role only).
    """

    NAME = 'placement'
    ERROR = PlacementServerError
    LOG_NAME = 'placement.log'
    DIR_PREFIX = 'placement-server-'
    #: gunicorn's wait for its workers to finish their requests on SIGTERM
    GRACEFUL_TIMEOUT = 10

    def __init__(self, workdir=None, db_url=None, reshape_policy=RESHAPE_POLICY, debug=False,
                 keep=False, python=None, start_timeout=60.0, workers=None, db=None, db_server=None,
                 db_server_options=None, log_db_retries=False, wsgi_server=None, uwsgi_connection_close=False):
        self._init_process(workdir, python, start_timeout, keep=keep)
        self.db_url = db_url
        self.reshape_policy = reshape_policy
        self.debug = debug
        self.log_db_retries = log_db_retries
        self._own_db = False
        if db in (None, 'sqlite'):
            self.db_kind = 'sqlite' if db_server is None and db_url is None else _url_kind(db_url or db_server.url)
        else:
            if db_url is not None or db_server is not None:
                raise ValueError('give db= or db_url=/db_server=, not both')
            db_server = _db_servers().make_server(db, keep=keep, **(db_server_options or {}))
            self._own_db = True
            self.db_kind = db
        self.db_server = db_server
        if workers is None:
            workers = 1 if self.db_kind == 'sqlite' else 4
        self.workers = int(workers)
        if wsgi_server not in (None, 'wsgiref', 'gunicorn', 'uwsgi'):
            raise ValueError('wsgi_server: wsgiref, gunicorn or uwsgi, not %r' % (wsgi_server,))
        #: what serves Placement: 'wsgiref' (one process), 'gunicorn' or 'uwsgi' (a master and its workers)
        self.wsgi_server = wsgi_server or ('gunicorn' if self.workers > 1 else 'wsgiref')
        self.uwsgi_connection_close = uwsgi_connection_close
        self._listener = None
        #: seconds: ``db`` (starting an own database server), ``placement`` (db sync, serve, answer)
        self.timings = {}

    @classmethod
    def production(cls, db='mariadb', workers=4, **kwargs):
        """Placement as deployed: ``db`` ('mariadb' or 'postgresql') behind gunicorn ``workers``,
        oslo.db's deadlock retries logged."""
        kwargs.setdefault('log_db_retries', True)
        return cls(db=db, workers=workers, **kwargs)

    @property
    def gunicorn(self):
        """Served by a master process and its workers (gunicorn or uWSGI), not by wsgiref."""
        return self.wsgi_server != 'wsgiref'

    @classmethod
    def existing(cls, url):
        """A handle on a server somebody else runs (``--placement-url``): ``stop()`` is a no-op.

        Its policy is whatever that server has; ``log_path`` is None.
        """
        self = cls(workdir=None)
        self.external = True
        self.url = url.rstrip('/')
        return self

    # -- paths ------------------------------------------------------------
    @property
    def conf_path(self):
        return os.path.join(self.workdir, 'placement.conf')

    @property
    def policy_path(self):
        return os.path.join(self.workdir, 'policy.yaml')

    @property
    def db_path(self):
        return os.path.join(self.workdir, 'placement.db')

    # -- lifecycle ------------------------------------------------------------
    def start(self):
        """Start the own database server (if any), write the config, db sync, serve, wait."""
        if self.proc is not None or self.external:
            return self
        began = time.monotonic()
        if self._own_db and not self.db_server.running:
            try:
                self.db_server.start()
            except BaseException:
                self.db_server.stop()
                raise
            self.timings['db'] = time.monotonic() - began
        if self.db_server is not None:
            self.db_url = self.db_server.url
        began = time.monotonic()
        super(PlacementServer, self).start()
        self.timings['placement'] = time.monotonic() - began
        return self

    def stop(self):
        """Stop Placement (gunicorn: SIGTERM to the master, SIGKILL to its group after
        ``GRACEFUL_TIMEOUT`` + 10 s), then the own database server.  Idempotent."""
        try:
            if self.gunicorn:
                self._stop_gunicorn(kill=False)
            super(PlacementServer, self).stop()
        finally:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            if self._own_db and self.db_server is not None:
                self.db_server.stop()

    def _prepare(self):
        self._db_sync()

    def restart(self, kill=True):
        """Stop the serving process and serve again on the SAME workdir and database.

        ``kill``: SIGKILL (a crash: no cleanup, an open SQLite transaction is rolled back
        when the database is next opened), else SIGTERM.  No ``db sync`` and no config
        rewrite.  wsgiref: the kernel picks a new port: read ``url`` / ``port`` again
        afterwards.  Used by tests/reliability (a server killed and restarted under a
        reshape).  gunicorn: the master and its workers are SIGKILLed as a group (``kill``)
        or the master gets SIGTERM (graceful); a new master serves the SAME listening
        socket, so ``url`` stays (clients connecting meanwhile wait in its backlog).  The
        database server keeps running.
        """
        if self.external or self.workdir is None:
            raise PlacementServerError('restart needs a server this object started')
        if self.gunicorn:
            self._stop_gunicorn(kill=kill)
        else:
            proc, self.proc = self.proc, None
            if proc is not None and proc.poll() is None:
                if kill:
                    proc.kill()
                else:
                    proc.terminate()
                proc.wait(10)
            self.port = None
            self.url = None
        if self._log is None:
            self._log = open(self.log_path, 'ab')
        self._spawn()
        self._wait_ready()
        return self

    def _write_config(self):
        db_url = self.db_url or 'sqlite:///' + self.db_path
        with open(self.conf_path, 'w') as fh:
            fh.write(_CONF_TEMPLATE.format(debug='true' if self.debug else 'false', log_levels=self._log_levels(),
                                           db_url=db_url, policy_file=self.policy_path))
        self._write_policy()

    def _log_levels(self):
        """The ``default_log_levels`` line: oslo.log's and Placement's defaults + oslo_db.api=DEBUG."""
        if not self.log_db_retries:
            return ''
        from oslo_log import log as oslo_log
        levels = oslo_log.get_default_log_levels() + ['routes=INFO', 'oslo_db.api=DEBUG']
        return 'default_log_levels = %s\n' % ','.join(levels)

    def _write_policy(self):
        with open(self.policy_path, 'w') as fh:
            if self.reshape_policy is not None:
                # JSON is valid YAML; json.dumps quotes the check string safely.
                fh.write('%s: %s\n' % (json.dumps('placement:reshaper:reshape'),
                                       json.dumps(self.reshape_policy)))
            else:
                fh.write('{}\n')

    def _db_sync(self):
        cmd = [self.python, '-c', 'import sys; from placement.cmd.manage import main; sys.exit(main())',
               '--config-file', self.conf_path, 'db', 'sync']
        rc = subprocess.call(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=self._env())
        if rc != 0:
            raise PlacementServerError('placement-manage db sync failed (rc %s), see %s' % (rc, self.log_path))

    def _env(self):
        env = dict(os.environ)
        env['OS_PLACEMENT_CONFIG_DIR'] = self.workdir
        # never let a proxy from the environment see loopback traffic
        env['NO_PROXY'] = env['no_proxy'] = LOOPBACK + ',localhost'
        return env

    def _command(self, port_file):
        return [self.python, os.path.abspath(__file__), '--serve', self.workdir, port_file]

    # -- gunicorn ---------------------------------------------------------------
    def _spawn(self):
        if not self.gunicorn:
            return super(PlacementServer, self)._spawn()
        if self._listener is None:
            # bound here and inherited by gunicorn: no pick-then-bind race, same port on restart
            self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._listener.bind((LOOPBACK, 0))
            self._listener.listen(128)
        fd = self._listener.fileno()
        if self.wsgi_server == 'uwsgi':
            cmd = self._uwsgi_command(fd)
        else:
            cmd = self._gunicorn_command(fd)
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=self._env(), pass_fds=(fd,), start_new_session=True,
                                     preexec_fn=_parent_death_signal(signal.SIGTERM))
        self.port = self._listener.getsockname()[1]
        self.url = 'http://%s:%d' % (LOOPBACK, self.port)
        return None

    def _gunicorn_command(self, fd):
        return [self.python, '-m', 'gunicorn', '--workers', str(self.workers), '--worker-class', 'sync',
                '--bind', 'fd://%d' % fd, '--preload', '--timeout', '120',
                '--graceful-timeout', str(self.GRACEFUL_TIMEOUT), '--error-logfile', '-', '--log-level', 'info',
                '--chdir', self.workdir, '--name', 'placement-api', 'placement.wsgi.api:application']

    def _uwsgi_command(self, fd):
        """Debian's uWSGI with its python3 plugin on this venv, shaped as devstack's placement-api.ini."""
        binary = shutil.which('uwsgi') or shutil.which('uwsgi-core')
        if binary is None:
            raise PlacementServerError('uwsgi is not installed: `make deps` installs uwsgi-core and '
                                       'uwsgi-plugin-python3 (bindep.txt)')
        probe = subprocess.run([self.python, '-c', 'import sys, sysconfig; print(sysconfig.get_paths()["purelib"]); '
                                'print("%d.%d" % sys.version_info[:2])'],
                               stdout=subprocess.PIPE, check=True, universal_newlines=True)
        site_packages, version = probe.stdout.split('\n', 2)[:2]
        if version != UWSGI_PYTHON:
            raise PlacementServerError('Debian\'s uwsgi python3 plugin embeds Python %s; %s is %s'
                                       % (UWSGI_PYTHON, self.python, version))
        # Not --virtualenv: it makes the venv PYTHONHOME, and Debian's libpython then loads the
        # stdlib of the venv's own Python (pyenv 3.11.7 here: undefined symbols in _ssl).  Debian's
        # stdlib, and the venv's site-packages first on the path, with its .pth files run.
        app = os.path.join(self.workdir, 'placement_uwsgi.py')
        with open(app, 'w') as fh:
            fh.write(_UWSGI_APP.format(site=json.dumps(site_packages)))
        cmd = [binary, '--plugin', 'python3', '--pythonpath', site_packages, '--http-socket', 'fd://%d' % fd,
               '--master', '--processes', str(self.workers), '--enable-threads', '--thunder-lock', '--lazy-apps',
               '--die-on-term', '--exit-on-reload', '--need-app', '--buffer-size', '65535',
               '--chdir', self.workdir, '--procname-prefix', 'placement-', '--disable-logging',
               '--wsgi-file', app]
        if self.uwsgi_connection_close:
            cmd += ['--add-header', 'Connection: close']
        return cmd

    def _wait_ready(self):
        """It answers ``GET /``; with gunicorn, also all ``workers`` have been forked."""
        super(PlacementServer, self)._wait_ready()
        if not self.gunicorn:
            return
        deadline = time.monotonic() + self.start_timeout
        while len(self.worker_pids()) < self.workers:
            self._check_alive()
            if time.monotonic() > deadline:
                self._fail('has %d of its %d workers after %ss'
                           % (len(self.worker_pids()), self.workers, self.start_timeout))
            time.sleep(0.05)

    def _stop_gunicorn(self, kill=False):
        """SIGKILL the master's process group (``kill``), or SIGTERM the master and wait
        (it stops its workers), then SIGKILL whatever of its group is left."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        group = proc.pid              # start_new_session: the master leads its own group
        if proc.poll() is None:
            if kill:
                killpg(group, signal.SIGKILL)
            else:
                proc.terminate()
            try:
                proc.wait(self.GRACEFUL_TIMEOUT + 10)
            except subprocess.TimeoutExpired:
                killpg(group, signal.SIGKILL)
                proc.wait(10)
        killpg(group, signal.SIGKILL)  # workers a killed master left behind

    def worker_pids(self):
        """The pids of gunicorn's workers (children of the master), [] for wsgiref."""
        if not self.gunicorn or self.proc is None:
            return []
        try:
            with open('/proc/%d/task/%d/children' % (self.proc.pid, self.proc.pid)) as fh:
                return [int(pid) for pid in fh.read().split()]
        except OSError:
            return []

    # -- deadlocks ----------------------------------------------------------------
    def db_retries(self):
        """``{function: count}`` of oslo.db's deadlock retries in placement.log."""
        return count_db_retries(self.log_path)

    def deadlock_counts(self):
        """``{'retries': oslo.db retries in placement.log (needs log_db_retries),
        'deadlocks': deadlocks the database logged (None without a db server of ours)}``."""
        deadlocks = None
        if self.db_server is not None and hasattr(self.db_server, 'deadlocks'):
            deadlocks = self.db_server.deadlocks()
        return {'retries': sum(self.db_retries().values()), 'deadlocks': deadlocks}

    # -- how clients reach it ---------------------------------------------
    def headers(self, token='admin', roles=None):
        """noauth2 request headers: ``X-Auth-Token`` and, when given, ``X-Roles``."""
        hdrs = {'X-Auth-Token': token}
        if roles:
            hdrs['X-Roles'] = roles if isinstance(roles, str) else ','.join(roles)
        return hdrs

    def module_auth(self, token='admin'):
        """The module options a playbook task uses to reach this server (see module doc)."""
        return {'auth_type': 'admin_token', 'auth': {'token': token, 'endpoint': self.url}}

    def adapter(self, token='admin', roles=('admin', 'service'), timeout=30):
        """A keystoneauth Adapter on this server sending the given noauth2 token and roles.

        ``roles=None`` sends no ``X-Roles`` (the token's own defaults apply).
        """
        from keystoneauth1 import adapter as ks_adapter
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint

        auth = token_endpoint.Token(self.url, token)
        sess = ks_session.Session(auth=auth, timeout=timeout)
        extra = {}
        if roles:
            extra['X-Roles'] = roles if isinstance(roles, str) else ','.join(roles)
        return ks_adapter.Adapter(session=sess, service_type='placement',
                                  endpoint_override=self.url, additional_headers=extra)


def _db_servers():
    """tests/db_servers.py (next to this file), whoever imported us."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import db_servers
    return db_servers


def _url_kind(url):
    """'mariadb', 'postgresql' or 'sqlite' (or the URL's scheme) for a SQLAlchemy URL."""
    scheme = (url or 'sqlite').split(':', 1)[0].split('+', 1)[0]
    return {'mysql': 'mariadb', 'mariadb': 'mariadb', 'postgresql': 'postgresql'}.get(scheme, scheme)


def start_server(**kwargs):
    """Start a :class:`PlacementServer` and return it (caller calls ``.stop()``)."""
    return PlacementServer(**kwargs).start()


# -- the child process ------------------------------------------------------
def _serve(config_dir, port_file):
    os.environ['OS_PLACEMENT_CONFIG_DIR'] = config_dir
    import socketserver
    from wsgiref import simple_server

    from placement.wsgi import api  # reads placement.conf from OS_PLACEMENT_CONFIG_DIR

    class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 64

    class Handler(simple_server.WSGIRequestHandler):
        def address_string(self):
            return self.client_address[0]

        def log_request(self, code='-', size='-'):
            pass  # placement.requestlog already logs every request with its request id

        def log_message(self, fmt, *args):
            sys.stderr.write('%s - %s\n' % (self.log_date_time_string(), fmt % args))

    httpd = simple_server.make_server(LOOPBACK, 0, api.application,
                                      server_class=Server, handler_class=Handler)

    def _term(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _term)

    # Never outlive the process that started us (a killed pytest must not leave
    # a server behind on a shared machine).
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
    sys.stderr.write('placement serving on http://%s:%d\n' % httpd.server_address[:2])
    sys.stderr.flush()
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--serve', nargs=2, metavar=('CONFIG_DIR', 'PORT_FILE'),
                        help='(internal) serve placement from CONFIG_DIR, write the port to PORT_FILE')
    parser.add_argument('--workdir', help='keep config, db and log here')
    parser.add_argument('--default-policy', action='store_true',
                        help='keep Placement\'s default reshape policy (service role only)')
    parser.add_argument('--db', choices=('sqlite', 'mariadb', 'postgresql'), default='sqlite',
                        help='start a private MariaDB or PostgreSQL for it (default: SQLite)')
    parser.add_argument('--workers', type=int, default=None,
                        help='gunicorn workers (default: 4 with --db mariadb/postgresql, else wsgiref)')
    parser.add_argument('--wsgi-server', choices=('gunicorn', 'uwsgi'), default=None,
                        help='serve the workers with uwsgi instead of gunicorn (Debian\'s uwsgi-core)')
    parser.add_argument('--uwsgi-connection-close', action='store_true',
                        help='uwsgi: add devstack\'s "Connection: close" to every answer (no resets)')
    args = parser.parse_args(argv)
    if args.serve:
        _serve(*args.serve)
        return 0
    server = PlacementServer(workdir=args.workdir, db=args.db, workers=args.workers, wsgi_server=args.wsgi_server,
                             uwsgi_connection_close=args.uwsgi_connection_close,
                             log_db_retries=args.db != 'sqlite',
                             reshape_policy=None if args.default_policy else RESHAPE_POLICY)

    def _stop(signum, frame):
        raise KeyboardInterrupt()

    # a background job of a non-interactive shell ignores SIGINT: handle both
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    server.start()
    print('placement at %s (log %s); Ctrl-C or SIGTERM stops it' % (server.url, server.log_path))
    if server.db_server is not None:
        print('database %s (log %s)' % (server.db_server.url, server.db_server.error_log))
    print(json.dumps(server.module_auth()))
    try:
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
