# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by the unit suites on the embedded Placement (tests/conftest.py has the backends)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from test_reshaper_support import flat_gpu_node, gpu_report


@pytest.fixture
def node(embedded_backend, tmp_path):
    """compute-01 as nova left it before the VGPU reshape (two GPUs, VGPU on the root, a pool)."""
    report = gpu_report(tmp_path / 'host', 'compute-01')
    built = flat_gpu_node(embedded_backend, 'compute-01', report)
    built['report'] = report
    built['snapdir'] = str(tmp_path / 'snapshots')
    return built
