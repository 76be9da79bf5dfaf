# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Differential testing of the embedded store against the real Placement.

:mod:`.harness` records what a backend answers to a sequence of operations in a
backend-neutral form (uuids, names and custom class/trait names replaced by the
symbols the scenario gave them); :mod:`.scenarios` holds the scenarios.
"""
