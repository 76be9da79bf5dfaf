# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A private RabbitMQ node (Debian ``rabbitmq-server`` 3.10) on 127.0.0.1, started as our own process.

    broker = RabbitMQ(workdir).start()      # ~10-20 s on 2 cores
    broker.transport_url                    # rabbit://nova:PW@127.0.0.1:PORT/
    broker.restart()                        # a broker restart (same ports, same data)
    broker.stop()

Private: its own node name (``twin-<pid>@localhost``), AMQP port, distribution port, its own
``epmd`` on a port of its own (started here, in the foreground, so that we own its pid and stop
it by that pid), mnesia/log dirs and HOME (the Erlang cookie) under ``workdir``.  A
``rabbitmq.conf`` there makes the user ``nova`` (a random password) the default user and binds
AMQP to 127.0.0.1 only.  ``/usr/lib/rabbitmq/bin/rabbitmq-server`` runs in the foreground in a
session of its own: SIGTERM makes it run ``rabbitmqctl stop`` (its own trap), SIGKILL to the
session after ``stop_timeout``.  Ready = the AMQP port answers the protocol header with
``Connection.Start`` (a frame starting with method 10,10).
"""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time

LOOPBACK = '127.0.0.1'
SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server'
EPMD = shutil.which('epmd') or '/usr/bin/epmd'

_CONF = """\
listeners.tcp.default = {host}:{port}
default_user = {user}
default_pass = {password}
default_vhost = /
loopback_users = none
log.file.level = info
log.console = false
"""


class RabbitMQError(RuntimeError):
    """The broker could not start (its log is named)."""


def free_port():
    sock = socket.socket()
    sock.bind((LOOPBACK, 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def amqp_answers(port, timeout=2.0):
    """True when 127.0.0.1:port answers the AMQP 0-9-1 header with Connection.Start."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
            sock.sendall(b'AMQP\x00\x00\x09\x01')
            data = b''
            while len(data) < 11:
                chunk = sock.recv(64)
                if not chunk:
                    return False
                data += chunk
            # frame type 1 (method), channel 0, size(4), class 10 method 10
            return data[0] == 1 and data[7:11] == b'\x00\x0a\x00\x0a'
    except OSError:
        return False


class RabbitMQ(object):
    """One private RabbitMQ node; see the module doc."""

    def __init__(self, workdir, user='nova', password=None, start_timeout=120.0, stop_timeout=30.0):
        self.workdir = os.path.abspath(workdir)
        self.user = user
        self.password = password or secrets.token_hex(12)
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.nodename = 'twin-%d@localhost' % os.getpid()
        self.port = None
        self.dist_port = None
        self.epmd_port = None
        self.proc = None
        self.epmd = None
        self.timings = {}
        self._out = None

    @property
    def log_path(self):
        return os.path.join(self.workdir, 'rabbitmq-server.out')

    @property
    def log_dir(self):
        return os.path.join(self.workdir, 'log')

    @property
    def transport_url(self):
        return 'rabbit://%s:%s@%s:%d/' % (self.user, self.password, LOOPBACK, self.port)

    @property
    def pids(self):
        """{'rabbitmq-server': pid, 'epmd': pid} of the processes running now."""
        found = {}
        if self.proc is not None and self.proc.poll() is None:
            found['rabbitmq-server'] = self.proc.pid
        if self.epmd is not None and self.epmd.poll() is None:
            found['epmd'] = self.epmd.pid
        return found

    def _env(self):
        env = dict(os.environ)
        home = os.path.join(self.workdir, 'home')
        env.update({
            'HOME': home,
            'RABBITMQ_NODENAME': self.nodename,
            'RABBITMQ_NODE_IP_ADDRESS': LOOPBACK,
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'ERL_EPMD_PORT': str(self.epmd_port),
            'ERL_EPMD_ADDRESS': LOOPBACK,
            'RABBITMQ_MNESIA_BASE': os.path.join(self.workdir, 'mnesia'),
            'RABBITMQ_LOG_BASE': self.log_dir,
            'RABBITMQ_PID_FILE': os.path.join(self.workdir, 'rabbitmq.pid'),
            'RABBITMQ_CONFIG_FILE': os.path.join(self.workdir, 'rabbitmq.conf'),
            'RABBITMQ_ENABLED_PLUGINS_FILE': os.path.join(self.workdir, 'enabled_plugins'),
            'RABBITMQ_ENABLED_PLUGINS': '',
            'RABBITMQ_CONF_ENV_FILE': os.path.join(self.workdir, 'rabbitmq-env.conf'),
            'RABBITMQ_ADVANCED_CONFIG_FILE': os.path.join(self.workdir, 'advanced.config'),
            'LC_ALL': 'C.UTF-8',
        })
        return env

    def start(self):
        if not os.access(SERVER, os.X_OK):
            raise RabbitMQError('%s is missing: it is the Debian package rabbitmq-server (bindep.txt, profile '
                                'test); `make deps` installs it' % SERVER)
        began = time.monotonic()
        os.makedirs(os.path.join(self.workdir, 'home'), exist_ok=True)
        os.makedirs(self.log_dir, exist_ok=True)
        if self.port is None:
            self.port, self.dist_port, self.epmd_port = free_port(), free_port(), free_port()
        with open(os.path.join(self.workdir, 'rabbitmq.conf'), 'w') as fh:
            fh.write(_CONF.format(host=LOOPBACK, port=self.port, user=self.user, password=self.password))
        for name, text in (('enabled_plugins', '[].\n'), ('rabbitmq-env.conf', ''), ('advanced.config', '[].\n')):
            with open(os.path.join(self.workdir, name), 'w') as fh:
                fh.write(text)
        self._out = open(self.log_path, 'ab')
        env = self._env()
        try:
            if self.epmd is None or self.epmd.poll() is not None:
                self.epmd = subprocess.Popen([EPMD, '-port', str(self.epmd_port), '-address', LOOPBACK],
                                             stdout=self._out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             env=env, start_new_session=True)
            self.proc = subprocess.Popen([SERVER], stdout=self._out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env, cwd=self.workdir,
                                         start_new_session=True)
            deadline = time.monotonic() + self.start_timeout
            while not amqp_answers(self.port):
                if self.proc.poll() is not None:
                    raise RabbitMQError('rabbitmq-server exited (rc %s) while starting, see %s and %s'
                                        % (self.proc.returncode, self.log_path, self.log_dir))
                if time.monotonic() > deadline:
                    raise RabbitMQError('rabbitmq-server did not answer on %s:%d within %ss, see %s'
                                        % (LOOPBACK, self.port, self.start_timeout, self.log_dir))
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise
        self.timings['start'] = time.monotonic() - began
        return self

    def _stop_broker(self):
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()        # the script's trap runs `rabbitmqctl stop`
            try:
                proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # whatever of its session is left (beam, erl_child_setup)
        except (ProcessLookupError, PermissionError):
            pass
        if proc.poll() is None:
            proc.wait(10)

    def restart(self):
        """Stop the broker (gracefully) and start it again on the same ports and data; epmd stays."""
        began = time.monotonic()
        self._stop_broker()
        if self._out is not None:
            self._out.close()
            self._out = None
        self.start()
        self.timings['restart'] = time.monotonic() - began
        return self

    def stop(self):
        """Stop the broker, then our epmd, by their pids. Idempotent."""
        self._stop_broker()
        epmd, self.epmd = self.epmd, None
        if epmd is not None and epmd.poll() is None:
            epmd.terminate()
            try:
                epmd.wait(10)
            except subprocess.TimeoutExpired:
                epmd.kill()
                epmd.wait(10)
        if self._out is not None:
            self._out.close()
            self._out = None
