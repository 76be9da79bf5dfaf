# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's service manager of the end-to-end test (tests/nova_oracle/test_nova_e2e.py).

    python novactl.py stop cmp-e2e --port N       stop that nova-compute service
    python novactl.py start cmp-e2e --port N      start a new nova-compute service on that host
    python novactl.py version cmp-e2e --port N    print its version, as nova-compute --version does

The nova-compute services live in the test process (nova 34's functional harness); it serves a
small control endpoint on 127.0.0.1:N, and the rolling role runs this script on the node as its
rolling_reshape_nova_stop_command / _start_command / _version_command, as it would run
``docker stop nova_compute`` in a kolla-ansible deployment.  Standard library only; exits 1
with the test process' answer when it refuses.
"""

from __future__ import absolute_import, division, print_function

import argparse
import sys

from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('action', choices=['stop', 'start', 'version'])
    parser.add_argument('host')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--timeout', type=float, default=120)
    args = parser.parse_args(argv)
    url = 'http://127.0.0.1:%d/%s/%s' % (args.port, args.action, args.host)
    try:
        answer = urlopen(Request(url, data=b'', method='POST'), timeout=args.timeout)
        text = answer.read().decode('utf-8')
    except HTTPError as exc:
        sys.stderr.write('%s %s: %s\n' % (args.action, args.host, exc.read().decode('utf-8', 'replace')))
        return 1
    except URLError as exc:
        sys.stderr.write('%s %s: the test process does not answer at %s: %s\n' % (args.action, args.host, url, exc))
        return 1
    sys.stdout.write(text if text.endswith('\n') else text + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
