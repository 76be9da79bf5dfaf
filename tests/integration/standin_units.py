# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins for a compute node's service manager around a fake nova-compute process (no systemd,
no container engine here), for tests/integration/test_nova_compute_supervised.py.

    python standin_units.py supervise DIR UNIT [--restart-sec S]
        the unit UNIT as systemd runs a unit with Restart=always (kolla-ansible >= 16.0.0's
        kolla-<container>-container.service, RestartSec 11 s there): it runs the fake
        nova-compute (``python standin_units.py nova-compute DIR``); when that process ends
        while the unit is meant to run (killed by ``docker stop``, say) it is started again S
        seconds later; ``systemctl stop UNIT`` ends it for good (no restart), ``systemctl start
        UNIT`` starts it.
    python standin_units.py systemctl DIR show|is-active|stop|start [-p PROP] [--value] UNIT
        what ``systemctl`` does with the unit (``show`` prints LoadState, ActiveState, SubState,
        MainPID, and ExecStart when DIR/execstart names its program, as systemd does,
        ``LoadState=not-found`` for a unit it does not know); the test writes a ``systemctl``
        script on PATH that runs this.
    python standin_units.py nova-compute-cli DIR --version
        the program the unit's ExecStart names (prints the version).
    python standin_units.py venv-nova-compute ROOT VERSION PROGRAM [--version]
        the nova-compute of an openstack-ansible venv (ROOT/openstack/venvs/nova-<tag>/bin/nova-compute
        is a script running this, PROGRAM its own path): ``--version`` prints VERSION; otherwise it
        runs as nova-compute does, reading ROOT/etc/nova/nova.conf (through os_nova's /etc/nova
        link to the release's config directory): the unit's event log gets ``run VERSION PROGRAM
        CONF`` (CONF: the config directory /etc/nova resolves to); no nova.conf there: it exits 1.
    python standin_units.py visudo -cf FILE
        what ``visudo -cf`` checks of a sudoers file (here: each line a comment, ``Defaults...`` or
        ``USER ALL = (root) NOPASSWD: /absolute/path``).
    python standin_units.py docker DIR stop|start|exec CONTAINER [ARGS...]
        what ``docker`` does with the container, behind the unit's back: ``stop`` kills the
        process (the unit then restarts it), ``exec CONTAINER ARGS`` fails with docker's message
        when the process is not running (``nova-compute --version`` prints a version).

DIR holds the state: ``supervisor.pid``, ``unit`` (its name), ``state`` (``active running``,
``activating auto-restart``, ``inactive dead``), ``child.pid`` (while the fake nova-compute runs),
``events`` (one line per start, exit, restart, stop of the unit); ``start_delay`` (seconds, written by
a test) makes ``systemctl start`` return at once and the process start that much later, as a unit
around ``docker start -a`` does.  ``unit_file`` (a path, written by a test) makes the unit one loaded
from a unit file, as systemd loads it: its ExecStart= is read when the unit starts and at
``systemctl daemon-reload`` (into ``execstart``; a file changed without a daemon-reload is not
seen), and the unit runs that program (an openstack-ansible venv's nova-compute), not the fake
nova-compute.  Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import subprocess
import sys
import time

STOP, START = signal.SIGUSR1, signal.SIGUSR2
VERSION = '34.0.0'


def _read(path, default=''):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return default


def _write(path, text):
    tmp = path + '.tmp'
    with open(tmp, 'w') as handle:
        handle.write(text)
    os.rename(tmp, path)


def _event(state_dir, text):
    with open(os.path.join(state_dir, 'events'), 'a') as handle:
        handle.write('%.3f %s\n' % (time.time(), text))


def child_pid(state_dir):
    """The fake nova-compute's pid while it runs, else None."""
    pid = _read(os.path.join(state_dir, 'child.pid'))
    return int(pid) if pid else None


def events(state_dir):
    return [line.split(' ', 1)[1] for line in _read(os.path.join(state_dir, 'events')).splitlines() if line]


def timed_events(state_dir):
    """[(epoch seconds, event)] of the units' events, oldest first."""
    return [(float(line.split(' ', 1)[0]), line.split(' ', 1)[1])
            for line in _read(os.path.join(state_dir, 'events')).splitlines() if line]


def supervise(state_dir, unit, restart_sec):
    wanted = {'stop': False, 'start': False}

    def on_stop(signum, frame):
        wanted['stop'] = True

    def on_start(signum, frame):
        wanted['start'] = True

    signal.signal(STOP, on_stop)
    signal.signal(START, on_start)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    _write(os.path.join(state_dir, 'unit'), unit)
    pid_file = os.path.join(state_dir, 'child.pid')
    state_file = os.path.join(state_dir, 'state')
    child = None
    restart_at = None
    pending = None

    if _read(os.path.join(state_dir, 'unit_file')):
        load_unit(state_dir)

    def start(kind):
        program = _read(os.path.join(state_dir, 'execstart')) if _read(os.path.join(state_dir, 'unit_file')) else ''
        # the unit's ExecStart= as loaded (a unit file's), else the fake nova-compute
        argv = [program] if program else [sys.executable, os.path.abspath(__file__), 'nova-compute', state_dir]
        proc = subprocess.Popen(argv, env=dict(os.environ, STANDIN_UNIT_DIR=state_dir))
        _write(pid_file, str(proc.pid))
        _write(state_file, 'active running')
        _event(state_dir, '%s %d' % (kind, proc.pid))
        return proc

    try:
        child = start('start')
        _write(os.path.join(state_dir, 'supervisor.pid'), str(os.getpid()))
        while True:
            if wanted['stop']:
                wanted['stop'] = False
                restart_at = None
                pending = None
                if child is not None:
                    child.terminate()
                    child.wait()
                    child = None
                if os.path.exists(pid_file):
                    os.unlink(pid_file)
                _write(state_file, 'inactive dead')
                _event(state_dir, 'unit-stop')
            if wanted['start']:
                wanted['start'] = False
                if child is None and pending is None:
                    restart_at = None
                    delay = float(_read(os.path.join(state_dir, 'start_delay'), '0') or 0)
                    if delay > 0:
                        # a unit whose start returns before its container runs (Type=simple around
                        # `docker start -a`): the process comes DIR/start_delay seconds later
                        _write(state_file, 'activating start')
                        pending = time.time() + delay
                    else:
                        child = start('unit-start')
            if pending is not None and time.time() >= pending:
                pending = None
                child = start('unit-start')
            if child is not None and child.poll() is not None:
                # ended while the unit is meant to run: Restart=always
                _event(state_dir, 'exit %s' % child.returncode)
                child = None
                os.unlink(pid_file)
                _write(state_file, 'activating auto-restart')
                restart_at = time.time() + restart_sec
            if child is None and restart_at is not None and time.time() >= restart_at:
                restart_at = None
                child = start('restart')
            time.sleep(0.05)
    finally:
        if child is not None:
            child.terminate()
            child.wait()
        if os.path.exists(pid_file):
            os.unlink(pid_file)


def load_unit(state_dir):
    """Load the unit file's ExecStart= (systemd's daemon-reload): its program, into DIR/execstart."""
    with open(_read(os.path.join(state_dir, 'unit_file'))) as handle:
        found = [line.split('=', 1)[1].split()[0] for line in handle.read().splitlines()
                 if line.startswith('ExecStart=') and line.split('=', 1)[1].strip()]
    _write(os.path.join(state_dir, 'execstart'), found[-1] if found else '')
    return found[-1] if found else ''


def _wait(check, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        if check():
            return True
        time.sleep(0.05)
    return False


def systemctl(state_dir, action, args):
    """``systemctl ACTION [-p PROP]... [--value] UNIT``, or ``systemctl daemon-reload``."""
    if action == 'daemon-reload':
        if _read(os.path.join(state_dir, 'unit_file')):
            _event(state_dir, 'daemon-reload %s' % load_unit(state_dir))
        else:
            _event(state_dir, 'daemon-reload')
        return 0
    props, value_only = [], False
    while len(args) > 1:
        option = args.pop(0)
        if option == '-p':
            props.append(args.pop(0))
        elif option.startswith('--property='):
            props.append(option.split('=', 1)[1])
        elif option == '--value':
            value_only = True
    unit = args[0].strip("'")
    known = _read(os.path.join(state_dir, 'unit')) == unit
    state = _read(os.path.join(state_dir, 'state'), 'inactive dead').split()
    if action == 'show' and os.path.exists(os.path.join(state_dir, 'show_fails')):
        # what systemctl says when it cannot ask systemd (its bus timed out)
        sys.stderr.write('Failed to get properties: Connection timed out\n')
        return 1
    if action == 'show':
        lines = [('Id', '%s.service' % unit.replace('.service', '')), ('Names', '%s.service' % unit.replace('.service', ''))]
        if known:
            lines += [('LoadState', 'loaded'), ('ActiveState', state[0]), ('SubState', state[1]),
                      ('MainPID', str(child_pid(state_dir) or 0)), ('Restart', 'always'), ('RestartUSec', '11s')]
            program = _read(os.path.join(state_dir, 'execstart'))
            if program:
                # systemctl show's form of an ExecStart= command line
                lines.append(('ExecStart', '{ path=%s ; argv[]=%s ; ignore_errors=no ; start_time=[n/a] ; '
                                           'stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }' % (program, program)))
        else:
            lines += [('LoadState', 'not-found'), ('ActiveState', 'inactive'), ('SubState', 'dead'), ('MainPID', '0')]
        if props:
            lines = [(k, v) for k, v in lines if k in props]
        print('\n'.join(v if value_only else '%s=%s' % (k, v) for k, v in lines))
        return 0
    if not known:
        sys.stderr.write('Failed to %s %s.service: Unit %s.service not found.\n' % (action, unit, unit))
        return 5
    if action == 'is-active':
        print(state[0])
        return 0 if state[0] == 'active' else 3
    supervisor = int(_read(os.path.join(state_dir, 'supervisor.pid')))
    if action == 'stop':
        os.kill(supervisor, STOP)
        return 0 if _wait(lambda: _read(os.path.join(state_dir, 'state')) == 'inactive dead') else 1
    if action == 'start':
        os.kill(supervisor, START)
        if float(_read(os.path.join(state_dir, 'start_delay'), '0') or 0) > 0:
            return 0
        return 0 if _wait(lambda: child_pid(state_dir) is not None) else 1
    sys.stderr.write('standin systemctl: unknown action %s\n' % action)
    return 1


def docker(state_dir, action, container, args):
    pid = child_pid(state_dir)
    if action == 'stop':
        # the container's process ends; the unit around it is not told
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            _wait(lambda: child_pid(state_dir) != pid)
        print(container)
        return 0
    if action == 'start':
        if pid is None:
            os.kill(int(_read(os.path.join(state_dir, 'supervisor.pid'))), START)
            _wait(lambda: child_pid(state_dir) is not None)
        print(container)
        return 0
    if action == 'exec':
        if pid is None:
            sys.stderr.write('Error response from daemon: container %s is not running\n' % container)
            return 1
        if args[:2] == ['nova-compute', '--version']:
            print(VERSION)
        return 0
    sys.stderr.write('standin docker: unknown action %s\n' % action)
    return 1


def venv_nova_compute(root, version, program, args):
    if args == ['--version']:
        print(version)
        return 0
    conf_dir = os.path.realpath(os.path.join(root, 'etc', 'nova'))
    state_dir = os.environ.get('STANDIN_UNIT_DIR', '')
    if state_dir:
        _event(state_dir, 'run %s %s %s' % (version, program, conf_dir))
    if not os.path.exists(os.path.join(conf_dir, 'nova.conf')):
        sys.stderr.write('nova-compute %s: no nova.conf in %s\n' % (version, conf_dir))
        return 1
    nova_compute(state_dir)
    return 0


def visudo(args):
    """``visudo -cf FILE``: 0 when each line is a comment, a Defaults line or a rule naming absolute paths."""
    path = args[-1]
    for number, line in enumerate(_read(path).splitlines(), 1):
        text = line.strip()
        if not text or text.startswith('#') or text.startswith('Defaults'):
            continue
        parts = text.split('NOPASSWD:', 1)
        if len(parts) != 2 or not parts[1].strip().startswith('/') or ' ALL = (root) ' not in parts[0] + ' ':
            sys.stderr.write('%s:%d: syntax error\n' % (path, number))
            return 1
    print('%s: parsed OK' % path)
    return 0


def nova_compute(state_dir):
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    while True:
        time.sleep(1)


def main(argv):
    kind, state_dir = argv[0], argv[1]
    if kind == 'venv-nova-compute':
        return venv_nova_compute(argv[1], argv[2], argv[3], argv[4:])
    if kind == 'visudo':
        return visudo(argv[1:])
    if kind == 'supervise':
        restart_sec = float(argv[4]) if len(argv) > 4 and argv[3] == '--restart-sec' else 11.0
        supervise(state_dir, argv[2], restart_sec)
        return 0
    if kind == 'systemctl':
        return systemctl(state_dir, argv[2], argv[3:])
    if kind == 'nova-compute-cli':
        # the program a unit's ExecStart names: `nova-compute --version` prints the version
        if argv[2:] == ['--version']:
            print(VERSION)
            return 0
        return 2
    if kind == 'docker':
        return docker(state_dir, argv[2], argv[3], argv[4:])
    if kind == 'nova-compute':
        nova_compute(state_dir)
        return 0
    sys.stderr.write('usage: see the module docstring\n')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
