# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST backend against the REAL Placement (session fixture on 127.0.0.1)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from urllib.request import urlopen

import pytest

pytestmark = pytest.mark.real


def test_server_answers_root_on_loopback(placement_server):
    assert placement_server.url.startswith('http://127.0.0.1:')
    with urlopen(placement_server.url + '/', timeout=5) as resp:
        doc = json.loads(resp.read().decode('utf-8'))
    assert doc['versions'][0]['max_version'] == '1.39'
