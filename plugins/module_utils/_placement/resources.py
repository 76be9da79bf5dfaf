# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Idempotent operations behind the modules: read, validate, predict, diff, apply.

Every ``ensure_*`` function follows the same steps, inside one
:func:`.retry.with_conflict_retry` step so a lost generation race is recomputed
from a fresh read:

1. read the current state through the :class:`.backend.Backend` interface;
2. validate the request against it BEFORE any write (unknown provider, class or
   trait, bad values, an in-use class or provider, a re-parent the server cannot
   do), raising the :mod:`.errors` type and message the real service would give,
   so a bad request fails the same way in check mode and changes nothing;
3. compute the desired state and the PREDICTED result (including the provider
   and consumer generations Placement will hand out);
4. when nothing differs, send nothing (a PUT that would only bump a generation
   is not a change); in check mode stop here; otherwise write with the
   generations read in step 1 and re-read the result.

Each returns a dict with ``changed``, ``diff`` (``{"before", "after"}``), the
module's object keys and ``retries``.  Nothing here imports Ansible.

The operations live by noun in :mod:`.ops`: ``ops/providers.py`` (look-ups, views, ensure /
create / remove a provider, traits), ``ops/inventories.py``, ``ops/allocations.py``, and what
they share in ``ops/common.py``; this module is the one name the modules, the node pass and the
fleet report call them by (``from .. import resources as ops``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .ops.allocations import allocations_info, consumer_view, ensure_allocations, normalize_consumer_request
from .ops.inventories import ensure_inventory, inventory_warnings
from .ops.providers import (
    check_provider_request,
    create_new_provider,
    ensure_provider,
    find_provider,
    provider_record,
    providers_info,
    remove_provider,
    resolve_provider,
    set_traits,
    tree_order,
)

__all__ = [
    'allocations_info', 'check_provider_request', 'consumer_view', 'create_new_provider', 'ensure_allocations',
    'ensure_inventory', 'ensure_provider', 'find_provider', 'inventory_warnings', 'normalize_consumer_request',
    'provider_record', 'providers_info', 'remove_provider', 'resolve_provider', 'set_traits', 'tree_order',
]
