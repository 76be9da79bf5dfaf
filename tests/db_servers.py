# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private MariaDB and PostgreSQL servers the tests start and stop themselves.

Usage::

    from db_servers import MariaDBServer, PostgreSQLServer
    with MariaDBServer() as db:                 # temp dir, initialise, serve, wait, create db + user
        print(db.url)                           # mysql+pymysql://placement:PW@127.0.0.1:P/placement?charset=utf8
        print(db.error_log, db.deadlocks())     # InnoDB prints every deadlock there
    with PostgreSQLServer() as db:
        print(db.url)                           # postgresql+psycopg2://placement:PW@127.0.0.1:P/placement

Each server has its own temp dir (data dir, unix socket, pid file, logs; removed on stop
unless ``keep=True``), listens on 127.0.0.1 only (and on a unix socket in that dir), and is
one child process of ours: :meth:`stop` signals THAT pid (MariaDB SIGTERM, PostgreSQL SIGINT,
its "fast" shutdown), waits, then SIGKILLs it after ``stop_timeout``.  Started from the main
thread, the child also gets SIGTERM/SIGINT from the kernel when we die (``PR_SET_PDEATHSIG``),
so a killed pytest leaves no database behind.

Ports: a free port is picked, and when the server reports "Address already in use" (another
process took it in between) a new one is picked and the server started again, up to
``port_attempts`` times.

MariaDB (Debian's mariadb-server 10.11): ``mariadb-install-db --no-defaults
--auth-root-authentication-method=socket``, then ``mariadbd --no-defaults
--bind-address=127.0.0.1 --skip-name-resolve --innodb-print-all-deadlocks=ON``; as root it
runs with ``--user=root``.  The database is ``CHARACTER SET utf8`` (utf8mb3_general_ci, a
case-insensitive collation) as devstack and kolla-ansible create Placement's;
``innodb_flush_log_at_trx_commit=2`` (a killed mariadbd loses nothing, only an OS crash would).

PostgreSQL (15 on this image; the newest ``/usr/lib/postgresql/*/bin`` or ``initdb`` on PATH):
``initdb --no-locale -E UTF8 --auth-local=trust --auth-host=scram-sha-256``, then ``postgres
-h 127.0.0.1 -k DIR -p P -c synchronous_commit=off``.  Postgres refuses to run as root: as
root, initdb and postgres run as the ``postgres`` system user (``os_user=``), which owns the
temp dir; otherwise as ourselves.

Missing software is an ERROR, never a skip: :class:`DBServerMissing` names the Debian or pip
package and says that ``make deps`` (system packages, bindep.txt) or ``make venv`` installs it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import glob
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from server_util import tail  # noqa: E402

LOOPBACK = '127.0.0.1'

_PR_SET_PDEATHSIG = 1


def stop_process(proc, sig=signal.SIGTERM, timeout=10):
    """Send ``sig`` to a child still running, wait ``timeout`` seconds, then SIGKILL it."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


class DBServerError(RuntimeError):
    """A database server could not be prepared, did not come up, or did not stop."""


class DBServerMissing(DBServerError):
    """The server's programs (or the Python driver) are not installed."""


def _free_port():
    """A port the kernel considers free on 127.0.0.1 right now (a race the caller retries)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _parent_death_signal(sig):
    """A ``preexec_fn``: the kernel sends ``sig`` to the child when the thread that started it ends.

    Only used from the main thread (a helper thread ending would stop the server).
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None

    def preexec():
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    return preexec


def _read_from(path, offset):
    try:
        with open(path, 'rb') as fh:
            fh.seek(offset)
            return fh.read().decode('utf-8', 'replace')
    except OSError:
        return ''


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class DBServer(object):
    """What both servers share: temp dir, port retry, wait until it answers, stop by pid.

    A subclass sets ``NAME``, ``PACKAGE``, ``DIR_PREFIX``, ``STOP_SIGNAL``, ``BIND_IN_USE``
    (a regex of its "port taken" message) and provides ``_find_programs()``, ``_initialise()``,
    ``_command(port)``, ``_try_admin()`` (None when it answers, else the error),
    ``_create_database()`` and ``url``.
    """

    NAME = 'database'
    PACKAGE = '?'
    DIR_PREFIX = 'db-server-'
    STOP_SIGNAL = signal.SIGTERM
    BIND_IN_USE = re.compile(r'Address already in use')
    LOG_NAME = 'server.log'

    def __init__(self, workdir=None, keep=False, database='placement', user='placement', password=None,
                 start_timeout=60.0, stop_timeout=30.0, port_attempts=5):
        self._own_dir = workdir is None
        self.workdir = os.path.abspath(workdir) if workdir else None
        self.keep = keep
        self.database = database
        self.user = user
        self.password = password or secrets.token_hex(12)
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.port_attempts = port_attempts
        self.port = None
        self.proc = None
        self._out = None
        #: seconds: initialising the data dir, then serving until it answers with the db created
        self.timings = {}

    # -- paths --------------------------------------------------------------
    @property
    def datadir(self):
        return os.path.join(self.workdir, 'data')

    @property
    def socket_dir(self):
        return self.workdir

    @property
    def log_path(self):
        """The server's stdout/stderr (for MariaDB its error log is :attr:`error_log`)."""
        return None if self.workdir is None else os.path.join(self.workdir, self.LOG_NAME)

    @property
    def pid(self):
        return None if self.proc is None else self.proc.pid

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    # -- lifecycle ----------------------------------------------------------
    def start(self):
        if self.proc is not None:
            return self
        self._find_programs()
        self._check_driver()
        if self.workdir is None:
            self.workdir = tempfile.mkdtemp(prefix=self.DIR_PREFIX)
        else:
            os.makedirs(self.workdir, exist_ok=True)
        try:
            self._own_workdir()
            began = time.monotonic()
            self._initialise()
            self.timings['init'] = time.monotonic() - began
            self._serve()
            self._create_database()
            self.timings['start'] = time.monotonic() - began
            self.timings['serve'] = self.timings['start'] - self.timings['init']
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Signal the server's pid, wait ``stop_timeout``, SIGKILL it; remove the temp dir. Idempotent."""
        proc, self.proc = self.proc, None
        stop_process(proc, self.STOP_SIGNAL, self.stop_timeout)
        if self._out is not None:
            self._out.close()
            self._out = None
        if self._own_dir and not self.keep and self.workdir and os.path.isdir(self.workdir):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- helpers for subclasses ----------------------------------------------
    def _missing(self, what):
        raise DBServerMissing('%s is not installed (%s not found): it is the Debian package %s '
                              '(bindep.txt, profile test); `make deps` installs it (as root)'
                              % (self.NAME, what, self.PACKAGE))

    def _check_driver(self):
        """Hook: import the Python driver (DBServerMissing naming the pip package if absent)."""

    def _own_workdir(self):
        """Hook: make the temp dir usable by the server's OS user."""

    def _popen_kwargs(self):
        return {}

    def _run(self, cmd, what):
        log = os.path.join(self.workdir, '%s.log' % what)
        with open(log, 'ab') as out:
            rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=self._env(), **self._popen_kwargs())
        if rc != 0:
            raise DBServerError('%s: %s failed (rc %s), see %s; it ends with:\n%s'
                                % (self.NAME, what, rc, log, tail(log)))

    def _env(self):
        env = dict(os.environ)
        env.setdefault('LC_ALL', 'C.UTF-8')
        return env

    def _server_log(self):
        """Where the server writes its messages (startup errors are read from here)."""
        return self.log_path

    def _serve(self):
        last = None
        for _attempt in range(self.port_attempts):
            port = _free_port()
            offset = _size(self._server_log())
            self._out = open(self.log_path, 'ab')
            kwargs = self._popen_kwargs()
            kwargs['preexec_fn'] = _parent_death_signal(self.STOP_SIGNAL)
            self.proc = subprocess.Popen(self._command(port), stdout=self._out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self._env(), close_fds=True, **kwargs)
            self.port = port
            last = self._wait_answering(offset)
            if last is None:
                return
            # the port was taken between picking and binding: the server exited; try another one
            self.proc.wait(10)
            self.proc = None
            self._out.close()
            self._out = None
        raise DBServerError('%s: %d ports in a row were taken (%s)' % (self.NAME, self.port_attempts, last))

    def _wait_answering(self, offset):
        """None once the server answers; the bind error when it exited because the port was taken."""
        deadline = time.monotonic() + self.start_timeout
        last = None
        while True:
            if self.proc.poll() is not None:
                text = _read_from(self._server_log(), offset)
                found = self.BIND_IN_USE.search(text)
                if found:
                    return found.group(0)
                raise DBServerError('%s exited (rc %s) while starting, see %s; it ends with:\n%s'
                                    % (self.NAME, self.proc.returncode, self._server_log(),
                                       tail(self._server_log())))
            last = self._try_admin()
            if last is None:
                return None
            if time.monotonic() > deadline:
                raise DBServerError('%s did not answer within %ss (%s), see %s; it ends with:\n%s'
                                    % (self.NAME, self.start_timeout, last, self._server_log(),
                                       tail(self._server_log())))
            time.sleep(0.05)


# -- MariaDB ---------------------------------------------------------------------------------

class MariaDBServer(DBServer):
    """A private mariadbd (Debian mariadb-server 10.11) on 127.0.0.1 and a unix socket.

    ``url``: ``mysql+pymysql://USER:PW@127.0.0.1:P/DB?charset=utf8``.  ``error_log``: the
    server's error log, where ``--innodb-print-all-deadlocks=ON`` writes every deadlock
    (:meth:`deadlocks` counts them).  ``admin()``: a PyMySQL connection as root over the socket.
    """

    NAME = 'MariaDB'
    PACKAGE = 'mariadb-server'
    DIR_PREFIX = 'mariadb-server-'
    STOP_SIGNAL = signal.SIGTERM
    BIND_IN_USE = re.compile(r'Bind on TCP/IP port[^\n]*Address already in use|Address already in use')
    LOG_NAME = 'mariadbd.out'
    #: what InnoDB prints for each deadlock with innodb_print_all_deadlocks
    DEADLOCK_LINE = 'Transactions deadlock detected'
    #: server options beyond the ones that make it private (see the module doc)
    OPTIONS = ('--innodb-print-all-deadlocks=ON', '--skip-name-resolve', '--innodb-flush-log-at-trx-commit=2',
               '--max-connections=500')

    def __init__(self, *args, **kwargs):
        super(MariaDBServer, self).__init__(*args, **kwargs)
        self.mariadbd = None
        self.install_db = None

    @property
    def socket_path(self):
        return os.path.join(self.workdir, 'mariadb.sock')

    @property
    def pid_file(self):
        return os.path.join(self.workdir, 'mariadb.pid')

    @property
    def error_log(self):
        return None if self.workdir is None else os.path.join(self.workdir, 'error.log')

    @property
    def url(self):
        return 'mysql+pymysql://%s:%s@%s:%d/%s?charset=utf8' % (
            self.user, self.password, LOOPBACK, self.port, self.database)

    def _server_log(self):
        return self.error_log

    def _find_programs(self):
        path = os.environ.get('PATH', '') + os.pathsep + '/usr/sbin:/usr/bin:/sbin'
        self.mariadbd = shutil.which('mariadbd', path=path)
        if not self.mariadbd:
            self._missing('mariadbd')
        self.install_db = shutil.which('mariadb-install-db', path=path)
        if not self.install_db:
            self._missing('mariadb-install-db')

    def _check_driver(self):
        try:
            import pymysql  # noqa: F401  # pylint: disable=unused-import
        except ImportError:
            raise DBServerMissing('PyMySQL is not installed in %s: it is in requirements-dev.txt; '
                                  '`make venv` installs it' % sys.prefix)

    def _as_root(self):
        return os.geteuid() == 0

    def _initialise(self):
        cmd = [self.install_db, '--no-defaults', '--datadir=' + self.datadir,
               '--auth-root-authentication-method=socket', '--skip-test-db']
        if self._as_root():
            cmd.append('--user=root')
        self._run(cmd, 'mariadb-install-db')

    def _command(self, port):
        cmd = [self.mariadbd, '--no-defaults', '--datadir=' + self.datadir, '--socket=' + self.socket_path,
               '--port=%d' % port, '--bind-address=' + LOOPBACK, '--pid-file=' + self.pid_file,
               '--log-error=' + self.error_log]
        if self._as_root():
            cmd.append('--user=root')
        return cmd + list(self.OPTIONS)

    def _admin_user(self):
        import pwd
        return 'root' if self._as_root() else pwd.getpwuid(os.geteuid()).pw_name

    def admin(self, **kwargs):
        """A PyMySQL connection as the administrator (unix_socket authentication over the socket)."""
        import pymysql
        kwargs.setdefault('connect_timeout', 5)
        return pymysql.connect(unix_socket=self.socket_path, user=self._admin_user(), **kwargs)

    def _try_admin(self):
        if not os.path.exists(self.socket_path):
            return 'no socket yet'
        try:
            self.admin().close()
        except Exception as exc:  # pylint: disable=broad-except  # not ready yet
            return exc
        return None

    def _create_database(self):
        conn = self.admin(autocommit=True)
        try:
            with conn.cursor() as cur:
                # anonymous accounts would shadow ours for connections from localhost
                cur.execute("SELECT user, host FROM mysql.user WHERE user = ''")
                for _user, host in cur.fetchall():
                    cur.execute("DROP USER ''@%s", (host,))
                cur.execute('CREATE DATABASE `%s` CHARACTER SET utf8' % self.database)
                for host in (LOOPBACK, 'localhost'):
                    cur.execute('CREATE USER %s@%s IDENTIFIED BY %s', (self.user, host, self.password))
                    cur.execute('GRANT ALL PRIVILEGES ON `%s`.* TO %%s@%%s' % self.database, (self.user, host))
        finally:
            conn.close()

    def deadlocks(self):
        """How many deadlocks InnoDB has written to the error log so far."""
        return count_lines(self.error_log, self.DEADLOCK_LINE)


# -- PostgreSQL -------------------------------------------------------------------------------

def find_postgresql_bindir():
    """The directory holding ``initdb`` and ``postgres``: the newest /usr/lib/postgresql/*/bin,
    else ``pg_config --bindir``, else where ``initdb`` is on PATH; None when there is none."""
    def usable(path):
        return bool(path) and all(os.access(os.path.join(path, prog), os.X_OK) for prog in ('initdb', 'postgres'))

    def version(path):
        try:
            return [int(part) for part in os.path.basename(os.path.dirname(path)).split('.')]
        except ValueError:
            return [0]

    for path in sorted(glob.glob('/usr/lib/postgresql/*/bin'), key=version, reverse=True):
        if usable(path):
            return path
    pg_config = shutil.which('pg_config')
    if pg_config:
        try:
            path = subprocess.check_output([pg_config, '--bindir'], stderr=subprocess.DEVNULL).decode().strip()
        except (OSError, subprocess.CalledProcessError):
            path = None
        if usable(path):
            return path
    initdb = shutil.which('initdb')
    if initdb and usable(os.path.dirname(initdb)):
        return os.path.dirname(initdb)
    return None


class PostgreSQLServer(DBServer):
    """A private postgres on 127.0.0.1 and a unix socket in its temp dir.

    ``url``: ``postgresql+psycopg2://USER:PW@127.0.0.1:P/DB``.  As root it runs as ``os_user``
    (default ``postgres``), which then owns the temp dir.  ``admin()``: a psycopg2 connection
    as the superuser ``postgres`` over the socket (trust).
    """

    NAME = 'PostgreSQL'
    PACKAGE = 'postgresql'
    DIR_PREFIX = 'postgresql-server-'
    STOP_SIGNAL = signal.SIGINT          # "fast" shutdown: active sessions are ended
    BIND_IN_USE = re.compile(r'could not bind IPv4 address[^\n]*Address already in use|Address already in use')
    LOG_NAME = 'postgres.log'
    OPTIONS = ('-c', 'synchronous_commit=off', '-c', 'max_connections=300', '-c', 'log_lock_waits=on',
               '-c', 'deadlock_timeout=1s')
    DEADLOCK_LINE = 'deadlock detected'

    def __init__(self, *args, **kwargs):
        self.os_user = kwargs.pop('os_user', 'postgres')
        super(PostgreSQLServer, self).__init__(*args, **kwargs)
        self.bindir = None
        self._ids = None

    @property
    def url(self):
        return 'postgresql+psycopg2://%s:%s@%s:%d/%s' % (
            self.user, self.password, LOOPBACK, self.port, self.database)

    @property
    def error_log(self):
        return self.log_path

    def _find_programs(self):
        self.bindir = find_postgresql_bindir()
        if not self.bindir:
            self._missing('initdb and postgres (e.g. /usr/lib/postgresql/15/bin)')
        if os.geteuid() == 0:
            import pwd
            try:
                entry = pwd.getpwnam(self.os_user)
            except KeyError:
                raise DBServerMissing('PostgreSQL refuses to run as root and the user %r does not exist; the '
                                      'Debian package postgresql creates "postgres"; `make deps` installs it'
                                      % self.os_user)
            self._ids = (entry.pw_uid, entry.pw_gid, entry.pw_dir)

    def _check_driver(self):
        try:
            import psycopg2  # noqa: F401  # pylint: disable=unused-import
        except ImportError:
            raise DBServerMissing('psycopg2 is not installed in %s: psycopg2-binary is in requirements-dev.txt; '
                                  '`make venv` installs it' % sys.prefix)

    def _own_workdir(self):
        if self._ids:
            os.chown(self.workdir, self._ids[0], self._ids[1])
            os.chmod(self.workdir, 0o700)

    def _popen_kwargs(self):
        kwargs = {'cwd': self.workdir}
        if self._ids:
            kwargs.update(user=self._ids[0], group=self._ids[1], extra_groups=[])
        return kwargs

    def _env(self):
        env = super(PostgreSQLServer, self)._env()
        if self._ids:
            env['HOME'] = self._ids[2] or self.workdir
        for name in ('PGHOST', 'PGPORT', 'PGDATA', 'PGUSER', 'PGDATABASE', 'PGPASSWORD'):
            env.pop(name, None)
        return env

    def _initialise(self):
        self._run([os.path.join(self.bindir, 'initdb'), '-D', self.datadir, '-U', 'postgres', '-E', 'UTF8',
                   '--no-locale', '--auth-local=trust', '--auth-host=scram-sha-256', '--no-sync'], 'initdb')

    def _command(self, port):
        return [os.path.join(self.bindir, 'postgres'), '-D', self.datadir, '-h', LOOPBACK, '-k', self.socket_dir,
                '-p', str(port)] + list(self.OPTIONS)

    def admin(self, dbname='postgres'):
        """A psycopg2 connection as the superuser over the unix socket."""
        import psycopg2
        return psycopg2.connect(host=self.socket_dir, port=self.port, user='postgres', dbname=dbname,
                                connect_timeout=5)

    def _try_admin(self):
        try:
            self.admin().close()
        except Exception as exc:  # pylint: disable=broad-except  # starting up
            return exc
        return None

    def _create_database(self):
        conn = self.admin()
        try:
            conn.autocommit = True          # CREATE DATABASE cannot run in a transaction
            with conn.cursor() as cur:
                cur.execute('CREATE ROLE "%s" LOGIN PASSWORD %%s' % self.user, (self.password,))
                cur.execute('CREATE DATABASE "%s" OWNER "%s" ENCODING \'UTF8\'' % (self.database, self.user))
        finally:
            conn.close()

    def deadlocks(self):
        """How many deadlocks postgres has logged so far ("ERROR:  deadlock detected")."""
        return count_lines(self.error_log, self.DEADLOCK_LINE)


def count_lines(path, needle):
    """How many lines of ``path`` contain ``needle`` (0 when the file does not exist)."""
    if not path:
        return 0
    count = 0
    try:
        with open(path, 'rb') as fh:
            raw = needle.encode('utf-8')
            for line in fh:
                if raw in line:
                    count += 1
    except OSError:
        return 0
    return count


SERVERS = {'mariadb': MariaDBServer, 'postgresql': PostgreSQLServer}


def make_server(kind, **kwargs):
    """``make_server('mariadb'|'postgresql', **kwargs)``: an unstarted server of that kind."""
    try:
        cls = SERVERS[kind]
    except KeyError:
        raise ValueError('unknown database kind %r (known: %s)' % (kind, ', '.join(sorted(SERVERS))))
    return cls(**kwargs)
