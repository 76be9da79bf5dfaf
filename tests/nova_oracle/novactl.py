# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's service manager of the end-to-end test (tests/nova_oracle/test_nova_e2e.py).

    python -I -S novactl.py stop cmp-e2e --port N       stop that nova-compute service
    python -I -S novactl.py start cmp-e2e --port N      start a new nova-compute service on that host
    python -I -S novactl.py version cmp-e2e --port N    print its version, as nova-compute --version does

The nova-compute services live in the test process (nova 34's functional harness); it serves a
small control endpoint on 127.0.0.1:N, and the rolling role runs this script on the node as its
rolling_reshape_nova_stop_command / _start_command / _version_command, as it would run
``systemctl stop nova-compute`` or ``docker stop nova_compute`` in a deployment.

It imports nothing but ``socket`` and ``sys`` and runs without ``site`` (``-I -S``): it starts in
about 0.02 s, where a client on ``urllib`` took 0.06 s (``systemctl`` itself, a C program, about
0.005 s).  Its own start is not nova's: the test measures nova's stop and start inside the test
process, and every millisecond this client takes is counted as the roll's (issue 31's added time).
Exits 1 with the test process' answer when it refuses.
"""

import socket
import sys

ACTIONS = ('stop', 'start', 'version')


def usage(why):
    sys.stderr.write('novactl: %s\nusage: novactl.py stop|start|version HOST --port N [--timeout S]\n' % why)
    return 2


def main(argv):
    if len(argv) < 4 or argv[0] not in ACTIONS or argv[2] != '--port':
        return usage('bad arguments: %s' % ' '.join(argv))
    action, host = argv[0], argv[1]
    try:
        port = int(argv[3])
        timeout = float(argv[5]) if len(argv) > 5 and argv[4] == '--timeout' else 120.0
    except ValueError:
        return usage('bad number in %s' % ' '.join(argv))
    request = ('POST /%s/%s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n\r\n' % (action, host, port))
    try:
        conn = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        try:
            conn.sendall(request.encode('ascii'))
            chunks = []
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            conn.close()
    except (OSError, socket.timeout) as exc:
        sys.stderr.write('%s %s: the test process does not answer at 127.0.0.1:%d: %s\n' % (action, host, port, exc))
        return 1
    head, _sep, body = b''.join(chunks).partition(b'\r\n\r\n')
    status = head.split(b'\r\n', 1)[0].split()
    text = body.decode('utf-8', 'replace')
    if len(status) < 2 or status[1] != b'200':
        sys.stderr.write('%s %s: %s\n' % (action, host, text or head.decode('latin-1', 'replace')))
        return 1
    sys.stdout.write(text if text.endswith('\n') else text + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
