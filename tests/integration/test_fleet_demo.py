# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo` end to end, and its HTML report rendered by headless Chromium.

The demo (tools/demo.py) builds the default simulated fleet of twelve nodes, rolls the
reshape through it with ansible-playbook and prints the fleet summary.  The report it
writes is opened in headless Chromium: ``--dump-dom`` must show every node, and the
``--screenshot`` must be a real picture (not a blank page).

Chromium is Debian's ``chromium`` package (bindep.txt, profile test): ``make deps``, which
``make test`` runs first, installs it with apt-get when it is missing and it runs as root.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.slow

CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--disable-dev-shm-usage', '--hide-scrollbars']


def _chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get('CI'):
        pytest.fail('chromium is not installed (make deps installs Debian\'s chromium package as root)')
    pytest.skip('chromium is not installed here; `make deps` installs it (apt-get, as root)')
    return None


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('demo') / 'out')
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'tools', 'demo.py'), '--out', out, '--quiet'],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False, timeout=1200)
    with open(os.path.join(out, 'fleet.json')) as handle:
        fleet = json.load(handle)
    report_dir = os.path.realpath(os.path.join(out, 'reports', 'latest'))
    return {'rc': proc.returncode, 'output': proc.stdout, 'out': out, 'fleet': fleet, 'report_dir': report_dir}


def test_demo_rolls_the_fleet_and_prints_the_summary(demo):
    assert demo['rc'] == 0, demo['output']
    out = demo['output']
    assert 'Fleet summary' in out
    # 7 reshaped (two of them SEV, the SR-IOV one pinned too); the node reshaped before and the
    # plain node skipped; three moves in flight deferred (nova's migration consumer, a resize to
    # the same host, an evacuation)
    for label, count in (('nodes', 12), ('reshaped', 7), ('skipped (in layout)', 2), ('deferred', 3),
                         ('failed', 0)):
        assert re.search(r'^  %s\s+%d$' % (re.escape(label), count), out, flags=re.M), (label, out)
    moved = re.search(r'^  allocations moved\s+(\d+)  \(of (\d+) consumers\)$', out, flags=re.M)
    assert moved, out
    assert re.search(r'^  time taken\s+[\d.]+ s \(roll\) / [\d.]+ s \(whole demo\)$', out, flags=re.M), out
    assert '  report   %s' % os.path.join(demo['report_dir'], 'report.html') in out
    for words in ('deferred compute-07: move in flight: consumer', 'deferred compute-08: move in flight: instance',
                  'deferred compute-11: move in flight: consumer', 'next: Rerun the deferred nodes'):
        assert words in out, (words, out)
    with open(os.path.join(demo['report_dir'], 'summary.json')) as handle:
        summary = json.load(handle)
    assert dict((n['node'], n['status']) for n in summary['nodes']) == demo['fleet']['expected']
    totals = summary['totals']
    assert (totals['allocations_moved'], totals['consumers_moved']) == (int(moved.group(1)), int(moved.group(2)))
    assert totals['allocations_moved'] == sum(n['moved']['allocations'] for n in summary['nodes'])
    for node in summary['nodes']:
        # every reshaped node wrote its guests' allocations (moved them, or, healing PCI in Placement,
        # created and converted them: its journal's words), the others none
        figures = node['figures']
        wrote = figures['allocations_moved'] + figures['allocations_created'] + figures['allocations_converted']
        assert (wrote > 0) == (node['status'] == 'reshaped'), node
        assert node['moved']['allocations'] == figures['allocations_moved'], node
        assert node['verification_failed'] == []
    # the demo hooks ran around every reshape and left no node "disabled"
    for node in demo['fleet']['nodes']:
        assert not os.path.exists(os.path.join(os.path.dirname(node['sysfs_root']), 'nova-compute.disabled'))


def _png_pixels(path):
    """(width, height, decompressed scanlines) of a PNG, with the standard library only."""
    with open(path, 'rb') as handle:
        data = handle.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, width, height, idat = 8, None, None, b''
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height = struct.unpack('>II', chunk[:8])
        elif kind == b'IDAT':
            idat += chunk
        pos += 12 + length
    return width, height, zlib.decompress(idat)


def test_report_renders_in_headless_chromium(demo, tmp_path):
    assert demo['rc'] == 0, demo['output']
    browser = _chromium()
    page = 'file://' + os.path.join(demo['report_dir'], 'report.html')
    profile = str(tmp_path / 'profile')
    dom = subprocess.run([browser] + CHROMIUM_FLAGS + ['--user-data-dir=' + profile, '--dump-dom', page],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         check=False, timeout=180)
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    expected = demo['fleet']['expected']
    for node in expected:
        assert 'id="node-%s"' % node in html, node
        assert re.search(r'<td class="nw"><a href="#node-%s">%s</a></td>' % (node, node), html), node
    # every reshaped node is drawn before and after, every other node once
    pictures = len(re.findall(r'<svg [^>]*class="tree"', html))
    assert pictures == sum(2 if s == 'reshaped' else 1 for s in expected.values())
    shot = str(tmp_path / 'report.png')
    proc = subprocess.run([browser] + CHROMIUM_FLAGS + ['--user-data-dir=' + profile + '-2',
                                                        '--window-size=1400,2600', '--screenshot=' + shot, page],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          check=False, timeout=180)
    assert proc.returncode == 0, proc.stderr
    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (1400, 2600)
    # a rendered page: many colours (badges, bars, boxes), not a blank or an error page
    assert len(set(pixels[::7])) > 40
