# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's service manager of a node's nova-compute (what systemctl is on a real node).

    python novactl.py start  NODE_DIR [--release 33|34] [--wait [--timeout S]]
    python novactl.py stop   NODE_DIR [--timeout S]     SIGTERM to its pid, wait, SIGKILL after S
    python novactl.py status NODE_DIR                   exit 0 while it runs, 3 when it does not
    python novactl.py version NODE_DIR                  the release it runs (as nova-compute --version)
    python novactl.py wait   NODE_DIR [--timeout S]     until nova-compute started and reported
    python novactl.py switch NODE_DIR --release 34      the pre-start hook: the node's next start runs
                                                        that release's venv with its nova.conf

The openstack-ansible shape: one venv per release (``VENVS``: ``.venv-nova33`` for nova 33,
``.venv-nova`` for nova 34; ``CLOUD_TWIN_VENV_33`` / ``_34`` override them).  ``DIR/nova-release`` names the
release the node runs; ``switch`` rewrites it and the node's nova.conf (tests/cloud_twin/nodes.py
``switch_conf``: what the operator's configuration of the new release changes) -- what
playbooks/hooks/openstack_ansible_nova_switch.yml does to a unit's ExecStart and /etc/nova.
``start`` runs tests/cloud_twin/compute.py with that venv's python in a session of its own (stdout
and stderr to ``DIR/compute.out``, nova's log in ``DIR/nova-compute.log``), its pid in
``DIR/compute.pid``.  ``wait`` returns 0 once the launcher wrote ``DIR/compute.ready`` (nova's
``Service.start()`` returned: init_host, the start-up report to Placement, RPC), 1 with nova's error
when it wrote ``DIR/compute.failed`` or the process ended, 1 at the timeout.

The rolling role runs these as rolling_reshape_nova_stop_command / _start_command /
_status_command / _version_command, and tests/cloud_twin/novactl_switch.yml as
rolling_reshape_post_tasks (:func:`role_vars`).  Stdlib only: it starts in a few milliseconds.
"""

import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAUNCHER = os.path.join(HERE, 'compute.py')
SWITCH_TASKS = os.path.join(HERE, 'novactl_switch.yml')
RELEASES = ('33', '34')
VENVS = {'33': os.path.join(REPO, '.venv-nova33'), '34': os.path.join(REPO, '.venv-nova')}


class NovactlError(Exception):
    pass


def venv(release):
    path = os.environ.get('CLOUD_TWIN_VENV_%s' % release) or VENVS.get(release)
    if path is None:
        raise NovactlError('unknown release %r (one of %s)' % (release, ', '.join(RELEASES)))
    python = os.path.join(path, 'bin', 'python')
    if not os.access(python, os.X_OK):
        raise NovactlError('nova %s\'s venv is missing (%s): build it with .ci/nova-venv.sh' % (release, path))
    return path


def _read(path, default=None):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return default


def release_of(node):
    return _read(os.path.join(node, 'nova-release'), '33')


def pid_of(node):
    text = _read(os.path.join(node, 'compute.pid'))
    try:
        return int(text) if text else None
    except ValueError:
        return None


def alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (our own child not reaped yet) is not running
    state = _read('/proc/%d/stat' % pid, '')
    return ') Z' not in state


def installed_version(release):
    """The nova version installed in the release's venv (its dist-info), as nova-compute --version."""
    import glob
    found = glob.glob(os.path.join(venv(release), 'lib', 'python*', 'site-packages', 'nova-*.dist-info'))
    if not found:
        raise NovactlError('no nova in %s' % venv(release))
    return os.path.basename(found[0])[len('nova-'):-len('.dist-info')]


def journal(node, action, began, ended, **fields):
    """Append one line to ``DIR/novactl.journal`` (what systemd's journal says of a unit): the action,
    its wall-clock start and end (epoch seconds) and ``fields``; :func:`read_journal` reads it."""
    entry = dict(fields, action=action, began=began, ended=ended)
    with open(os.path.join(os.path.abspath(node), 'novactl.journal'), 'a') as handle:
        handle.write(json.dumps(entry, sort_keys=True) + '\n')


def read_journal(node):
    """The entries :func:`journal` wrote for the node, oldest first ([] when none)."""
    path = os.path.join(os.path.abspath(node), 'novactl.journal')
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def start(node, release=None, wait_up=False, timeout=300.0):
    node = os.path.abspath(node)
    if alive(pid_of(node)):
        return pid_of(node)
    began = time.time()
    release = release or release_of(node)
    python = os.path.join(venv(release), 'bin', 'python')
    with open(os.path.join(node, 'nova-release'), 'w') as handle:
        handle.write(release + '\n')
    for name in ('compute.ready', 'compute.failed', 'compute.pid'):
        if os.path.exists(os.path.join(node, name)):
            os.remove(os.path.join(node, name))
    with open(os.path.join(node, 'compute.out'), 'ab') as out:
        out.write(('--- novactl start: nova %s (%s) at %s\n' % (release, python, time.strftime('%H:%M:%S'))).encode())
        out.flush()
        proc = subprocess.Popen([python, LAUNCHER, '--node', node], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=node, start_new_session=True, close_fds=True)
    with open(os.path.join(node, 'compute.pid'), 'w') as handle:
        handle.write('%d\n' % proc.pid)
    if wait_up:
        try:
            wait(node, timeout)
        except NovactlError as exc:
            journal(node, 'start', began, time.time(), release=release, pid=proc.pid, error=str(exc))
            raise
    journal(node, 'start', began, time.time(), release=release, pid=proc.pid, waited=bool(wait_up))
    return proc.pid


def stop(node, timeout=60.0):
    """SIGTERM (oslo.service's graceful stop), wait, SIGKILL the session after ``timeout``."""
    node = os.path.abspath(node)
    pid = pid_of(node)
    if not alive(pid):
        return None
    began = time.monotonic()
    wall = time.time()
    os.kill(pid, signal.SIGTERM)
    while alive(pid) and time.monotonic() - began < timeout:
        _reap(pid)
        time.sleep(0.1)
    if alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        while alive(pid):
            _reap(pid)
            time.sleep(0.05)
    for name in ('compute.ready',):
        if os.path.exists(os.path.join(node, name)):
            os.remove(os.path.join(node, name))
    journal(node, 'stop', wall, time.time(), release=release_of(node), pid=pid)
    return time.monotonic() - began


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def wait(node, timeout=300.0):
    """Until the launcher says nova's service started; NovactlError when it failed or ended."""
    node = os.path.abspath(node)
    deadline = time.monotonic() + timeout
    while True:
        ready = _read(os.path.join(node, 'compute.ready'))
        if ready:
            return json.loads(ready)
        failed = _read(os.path.join(node, 'compute.failed'))
        if failed:
            raise NovactlError('nova-compute of %s failed to start: %s (see %s)'
                               % (node, json.loads(failed)['error'], os.path.join(node, 'nova-compute.log')))
        pid = pid_of(node)
        if pid:
            _reap(pid)
        if not alive(pid):
            raise NovactlError('nova-compute of %s is not running (see %s)' % (node, os.path.join(node, 'compute.out')))
        if time.monotonic() > deadline:
            raise NovactlError('nova-compute of %s did not start within %ss (see %s)'
                               % (node, timeout, os.path.join(node, 'nova-compute.log')))
        time.sleep(0.2)


def switch(node, release):
    """The pre-start hook: the node's next start runs ``release`` (its venv, its nova.conf)."""
    node = os.path.abspath(node)
    venv(release)
    if alive(pid_of(node)):
        raise NovactlError('nova-compute of %s runs (pid %d): stop it before the switch' % (node, pid_of(node)))
    sys.path.insert(0, os.path.join(REPO, 'tools'))
    sys.path.insert(0, HERE)
    import nodes
    nodes.switch_conf(node, release)
    with open(os.path.join(node, 'nova-release'), 'w') as handle:
        handle.write(release + '\n')
    return release


def role_vars(node, python=None, release='34'):
    """The rolling role's nova step variables that drive this node's nova-compute with novactl."""
    python = python or sys.executable
    base = [python, os.path.abspath(__file__)]
    node = os.path.abspath(node)
    return {
        'rolling_reshape_nova_stop_command': base + ['stop', node],
        'rolling_reshape_nova_start_command': base + ['start', node, '--wait'],
        'rolling_reshape_nova_status_command': base + ['status', node],
        'rolling_reshape_nova_version_command': base + ['version', node],
        'rolling_reshape_post_tasks': SWITCH_TASKS,
        'cloud_twin_novactl': base,
        'cloud_twin_node_dir': node,
        'cloud_twin_release': release,
    }


def main(argv):
    actions = ('start', 'stop', 'status', 'version', 'wait', 'switch')
    if len(argv) < 2 or argv[0] not in actions:
        sys.stderr.write('usage: novactl.py %s NODE_DIR [--release R] [--wait] [--timeout S]\n' % '|'.join(actions))
        return 2
    action, node = argv[0], argv[1]
    rest = argv[2:]
    opts = {'--release': None, '--timeout': None}
    wait_up = False
    while rest:
        flag = rest.pop(0)
        if flag == '--wait':
            wait_up = True
        elif flag in opts and rest:
            opts[flag] = rest.pop(0)
        else:
            sys.stderr.write('novactl: bad argument %s\n' % flag)
            return 2
    if not os.path.isfile(os.path.join(node, 'host.json')):
        sys.stderr.write('novactl: %s is not a node directory (no host.json)\n' % node)
        return 2
    try:
        timeout = float(opts['--timeout']) if opts['--timeout'] else None
    except ValueError:
        sys.stderr.write('novactl: bad --timeout %s\n' % opts['--timeout'])
        return 2
    try:
        if action == 'start':
            pid = start(node, opts['--release'], wait_up, timeout or 300.0)
            print('nova-compute %s started (pid %d)' % (release_of(node), pid))
        elif action == 'stop':
            took = stop(node, timeout or 60.0)
            print('nova-compute stopped in %.2fs' % took if took is not None else 'nova-compute was not running')
        elif action == 'status':
            if not alive(pid_of(node)):
                print('nova-compute is not running')
                return 3
            print('nova-compute runs (pid %d)' % pid_of(node))
        elif action == 'version':
            print(installed_version(release_of(node)))
        elif action == 'wait':
            print(json.dumps(wait(node, timeout or 300.0)))
        elif action == 'switch':
            if not opts['--release']:
                sys.stderr.write('novactl: switch needs --release\n')
                return 2
            print('switched to nova %s' % switch(node, opts['--release']))
    except NovactlError as exc:
        sys.stderr.write('novactl: %s\n' % exc)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
