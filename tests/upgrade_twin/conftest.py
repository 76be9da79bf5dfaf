# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each upgrade-twin case is judged by its NEW release, in that release's venv: this process keeps
the cases whose ``NEW`` is the nova installed here and deselects the others (they run in the
other venv's pytest, see .ci/upgrade-twin.sh, which runs every release's).  The shared bases
(``OLD`` None: ``VGPUCase``...) are no cases: pytest collects every unittest class, so they are
deselected too."""

from nova import version as nova_version


def pytest_collection_modifyitems(config, items):
    release = nova_version.version_string().split('.', 1)[0]
    keep, other = [], []
    for item in items:
        cls = getattr(item, 'cls', None)
        case = cls is None or (getattr(cls, 'OLD', None) is not None and getattr(cls, 'NEW', release) == release)
        (keep if case else other).append(item)
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = keep
