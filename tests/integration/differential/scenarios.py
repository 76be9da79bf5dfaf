# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scenarios run on both backends by tests/integration/test_differential.py.

Each scenario is ``f(ctx)`` (see :mod:`.harness`).  They never assert: the test
compares what the real Placement and the embedded store recorded, step by step
and in the final state.  Every failure a step provokes is recorded as
``[status, code, ErrorType]``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SCENARIOS = []


def scenario(func):
    SCENARIOS.append(func)
    return func


def _sorted_traits(result):
    if isinstance(result, dict) and 'traits' in result:
        result = dict(result)
        result['traits'] = sorted(result['traits'])
    return result


# -- providers and trees -------------------------------------------------------

@scenario
def nested_tree_in_tree(ctx):
    b = ctx.b
    ctx.create('root')
    ctx.create('child1', parent='root')
    ctx.create('child2', parent='root')
    ctx.create('grandchild', parent='child1')
    ctx.create('other')
    ctx.do('in_tree from grandchild', lambda: sorted(
        ctx.normalize(p)['uuid'] for p in b.list_providers(in_tree=ctx.rp('grandchild'))))
    ctx.do('in_tree of other', lambda: sorted(
        ctx.normalize(p)['uuid'] for p in b.list_providers(in_tree=ctx.rp('other'))))
    ctx.do('in_tree unknown', b.list_providers, in_tree=ctx.uuid('nowhere'))
    ctx.do('list by name', b.list_providers, name=ctx.name('child2'))
    ctx.do('list by uuid', b.list_providers, uuid=ctx.rp('grandchild'))
    ctx.do('create under unknown parent', b.create_provider, ctx.name('orphan'), uuid=ctx.uuid('orphan'),
           parent_provider_uuid=ctx.uuid('missing-parent'))
    ctx.do('create with parent = self', b.create_provider, ctx.name('selfish'), uuid=ctx.uuid('selfish'),
           parent_provider_uuid=ctx.uuid('selfish'))
    ctx.do('get unknown', b.get_provider, ctx.uuid('nowhere'))
    ctx.do('create without name', b.create_provider, '', uuid=ctx.uuid('nameless'))


@scenario
def reparent_and_unparent(ctx):
    b = ctx.b
    ctx.create('a')
    ctx.create('b')
    ctx.create('a1', parent='a')
    ctx.create('a11', parent='a1')
    ctx.do('move a1 under b', b.update_provider, ctx.rp('a1'), ctx.name('a1'), ctx.rp('b'))
    ctx.do('grandchild follows', b.get_provider, ctx.rp('a11'))
    ctx.do('loop: b under a11', b.update_provider, ctx.rp('b'), ctx.name('b'), ctx.rp('a11'))
    ctx.do('loop: a1 under itself', b.update_provider, ctx.rp('a1'), ctx.name('a1'), ctx.rp('a1'))
    ctx.do('un-parent a1', b.update_provider, ctx.rp('a1'), ctx.name('a1'), None)
    ctx.do('a11 root now a1', b.get_provider, ctx.rp('a11'))
    ctx.do('parent unknown', b.update_provider, ctx.rp('a'), ctx.name('a'), ctx.uuid('ghost'))
    ctx.do('rename root', b.update_provider, ctx.rp('a'), ctx.name('a-renamed'), None)
    ctx.do('update unknown', b.update_provider, ctx.uuid('ghost'), ctx.name('ghost'), None)


@scenario
def duplicate_names_and_uuids(ctx):
    b = ctx.b
    ctx.create('one')
    ctx.create('two')
    ctx.do('dup name', b.create_provider, ctx.name('one'), uuid=ctx.uuid('three'))
    ctx.do('dup uuid', b.create_provider, ctx.name('four'), uuid=ctx.rp('one'))
    ctx.do('rename to taken', b.update_provider, ctx.rp('two'), ctx.name('one'), None)
    ctx.do('rename to same', b.update_provider, ctx.rp('two'), ctx.name('two'), None)
    ctx.do('uppercase uuid is normalized', lambda: ctx.normalize(
        b.create_provider(ctx.name('five'), uuid=ctx.uuid('five').upper()))['uuid'])
    ctx.rp('five')
    ctx.do('name too long', b.create_provider, 'x' * 201, uuid=ctx.uuid('long'))
    ctx.do('bad uuid', b.create_provider, ctx.name('bad'), uuid='not-a-uuid')


@scenario
def delete_providers(ctx):
    b = ctx.b
    ctx.create('parent')
    ctx.create('kid', parent='parent')
    ctx.create('solo')
    ctx.set_inv('kid', {'VCPU': {'total': 4}})
    ctx.put('c1', {'kid': {'VCPU': 1}})
    ctx.do('traits on solo', b.ensure_trait, ctx.trait('t1'))
    # Placement lists a provider's traits in no promised order (no ORDER BY): on SQLite this
    # answer came back in the request's order, on PostgreSQL standard traits first.
    ctx.do('set traits solo', lambda: _sorted_traits(
        b.set_provider_traits(ctx.rp('solo'), 0, [ctx.trait('t1'), 'HW_CPU_X86_AVX'])))
    ctx.do('aggregate solo', b.set_aggregates, ctx.rp('solo'), 1, [ctx.uuid('agg')])
    ctx.do('delete parent with child', b.delete_provider, ctx.rp('parent'))
    ctx.do('delete kid with allocations', b.delete_provider, ctx.rp('kid'))
    ctx.do('delete allocations', b.delete_allocations, ctx.consumer('c1'))
    ctx.do('delete kid', b.delete_provider, ctx.rp('kid'))
    ctx.do('delete parent', b.delete_provider, ctx.rp('parent'))
    ctx.do('delete again', b.delete_provider, ctx.rp('parent'))
    ctx.do('delete solo (traits, aggregates cascade)', b.delete_provider, ctx.rp('solo'))
    ctx.do('recreate solo same name and uuid', b.create_provider, ctx.name('solo'), uuid=ctx.rp('solo'))
    ctx.do('no traits left', b.get_provider_traits, ctx.rp('solo'))
    ctx.do('no aggregates left', b.get_aggregates, ctx.rp('solo'))


# -- inventories ---------------------------------------------------------------

@scenario
def inventory_generations(ctx):
    b = ctx.b
    ctx.create('cn')
    inv = {'VCPU': {'total': 16, 'allocation_ratio': 4.0}, 'MEMORY_MB': {'total': 65536, 'reserved': 512}}
    ctx.set_inv('cn', inv, label='first PUT')
    ctx.set_inv('cn', inv, label='identical PUT bumps again')
    ctx.set_inv('cn', inv, label='stale generation', generation=0)
    ctx.do('single update', b.set_inventory, ctx.rp('cn'), 'VCPU', 2, {'total': 32})
    ctx.do('single update stale', b.set_inventory, ctx.rp('cn'), 'VCPU', 2, {'total': 32})
    ctx.do('single absent class', b.set_inventory, ctx.rp('cn'), 'DISK_GB', 3, {'total': 100})
    ctx.do('single unknown class', b.set_inventory, ctx.rp('cn'), ctx.rc('nope'), 3, {'total': 100})
    ctx.do('single missing total', b.set_inventory, ctx.rp('cn'), 'VCPU', 3, {'reserved': 1})
    ctx.do('unknown class in set', b.set_inventories, ctx.rp('cn'), 3, {ctx.rc('nope'): {'total': 1}})
    ctx.do('lowercase class in set', b.set_inventories, ctx.rp('cn'), 3, {'vcpu': {'total': 1}})
    ctx.do('total 0', b.set_inventories, ctx.rp('cn'), 3, {'VCPU': {'total': 0}})
    ctx.do('unknown field', b.set_inventories, ctx.rp('cn'), 3, {'VCPU': {'total': 1, 'colour': 'red'}})
    ctx.do('min_unit 0', b.set_inventories, ctx.rp('cn'), 3, {'VCPU': {'total': 4, 'min_unit': 0}})
    ctx.do('inventories of unknown provider', b.set_inventories, ctx.uuid('ghost'), 0, {})
    ctx.do('get inventories unknown', b.get_inventories, ctx.uuid('ghost'))
    ctx.do('usages unknown', b.get_usages, ctx.uuid('ghost'))


@scenario
def reserved_and_ratio_edges(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'reserved': 5}}, label='reserved > total')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'reserved': 4}}, label='reserved == total')
    ctx.put('c1', {'cn': {'VCPU': 1}}, label='allocate from reserved==total')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'reserved': 5, 'allocation_ratio': 0.5}},
                label='reserved > total, ratio 0.5 (capacity int(-0.5) == 0)')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'allocation_ratio': 0}}, label='ratio 0')
    ctx.put('c1', {'cn': {'VCPU': 1}}, label='allocate from ratio 0')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'allocation_ratio': -1.0}}, label='negative ratio')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'allocation_ratio': 1.5}}, label='ratio 1.5 -> capacity 6')
    ctx.put('c1', {'cn': {'VCPU': 6}}, label='allocate 6 of 6')
    ctx.put('c2', {'cn': {'VCPU': 1}}, label='allocate 7th')
    ctx.do('single reserved > total', b.set_inventory, ctx.rp('cn'), 'VCPU', ctx.gen('cn'),
           {'total': 4, 'reserved': 10})


@scenario
def inventory_in_use(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096}, 'DISK_GB': {'total': 100}})
    ctx.put('c1', {'cn': {'VCPU': 2, 'MEMORY_MB': 512}})
    ctx.set_inv('cn', {'MEMORY_MB': {'total': 4096}, 'DISK_GB': {'total': 100}}, label='PUT-all without VCPU')
    ctx.do('DELETE all in use', b.delete_inventories, ctx.rp('cn'))
    ctx.do('DELETE single in use', b.delete_inventory, ctx.rp('cn'), 'VCPU')
    ctx.do('DELETE single not in use', b.delete_inventory, ctx.rp('cn'), 'DISK_GB')
    ctx.do('DELETE single absent', b.delete_inventory, ctx.rp('cn'), 'DISK_GB')
    ctx.do('DELETE single unknown class', b.delete_inventory, ctx.rp('cn'), ctx.rc('nope'))
    ctx.do('DELETE single stale generation', b.delete_inventory, ctx.rp('cn'), 'MEMORY_MB', 0)
    ctx.set_inv('cn', {'VCPU': {'total': 1}, 'MEMORY_MB': {'total': 100}}, label='lower both below usage')
    ctx.do('delete allocations', b.delete_allocations, ctx.consumer('c1'))
    ctx.do('DELETE all with stale generation', b.delete_inventories, ctx.rp('cn'), 1)
    ctx.do('DELETE all', b.delete_inventories, ctx.rp('cn'))
    ctx.do('DELETE all again (empty)', b.delete_inventories, ctx.rp('cn'))


@scenario
def lower_total_below_usage(ctx):
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 8}})
    ctx.put('c1', {'cn': {'VCPU': 4}})
    ctx.put('c2', {'cn': {'VCPU': 3}})
    ctx.set_inv('cn', {'VCPU': {'total': 4}}, label='lower total to 4 with 7 used')
    ctx.put('c2', {'cn': {'VCPU': 3}}, label='rewrite same amount (not worse)')
    ctx.put('c2', {'cn': {'VCPU': 2}}, label='shrink (better)')
    ctx.put('c2', {'cn': {'VCPU': 3}}, label='grow back (worse)')
    ctx.put('c3', {'cn': {'VCPU': 1}}, label='new consumer while over')
    ctx.put('c1', {'cn': {'VCPU': 1}}, label='c1 shrinks to 1')
    ctx.put('c3', {'cn': {'VCPU': 1}}, label='new consumer fits now')


# -- allocations -------------------------------------------------------------

@scenario
def capacity_unit_checks(ctx):
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 16, 'min_unit': 2, 'max_unit': 8, 'step_size': 2},
                       'MEMORY_MB': {'total': 1024}})
    ctx.put('c1', {'cn': {'VCPU': 1}}, label='below min_unit')
    ctx.put('c1', {'cn': {'VCPU': 10}}, label='above max_unit')
    ctx.put('c1', {'cn': {'VCPU': 3}}, label='not a step')
    ctx.put('c1', {'cn': {'VCPU': 4, 'MEMORY_MB': 2048}}, label='over capacity')
    ctx.put('c1', {'cn': {'VCPU': 8, 'MEMORY_MB': 1024}}, label='exactly full')
    ctx.put('c2', {'cn': {'VCPU': 8}}, label='second fills VCPU')
    ctx.put('c3', {'cn': {'VCPU': 2}}, label='no VCPU left')
    ctx.put('c3', {'cn': {'DISK_GB': 1}}, label='class not in inventory')
    ctx.put('c3', {'cn': {ctx.rc('unknown'): 1}}, label='unknown class')
    ctx.put('c3', {'cn': {'VCPU': 0}}, label='amount 0 (schema)')
    ctx.put('c3', {'ghost': {'VCPU': 1}}, label='unknown provider')
    ctx.put('c3', {'cn': {'VCPU': 2}}, generation=None, label='after the leak, null is refused')
    ctx.put('c3', {'cn': {'VCPU': 2}}, generation=0, label='generation 0 of the leaked consumer')


@scenario
def sharing_disk_provider(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.create('nfs')
    agg = ctx.uuid('agg')
    ctx.set_inv('cn', {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192}})
    ctx.set_inv('nfs', {'DISK_GB': {'total': 1000}})
    ctx.do('trait sharing', b.set_provider_traits, ctx.rp('nfs'), ctx.gen('nfs'), ['MISC_SHARES_VIA_AGGREGATE'])
    ctx.do('agg cn', b.set_aggregates, ctx.rp('cn'), ctx.gen('cn'), [agg])
    ctx.do('agg nfs', b.set_aggregates, ctx.rp('nfs'), ctx.gen('nfs'), [agg])
    ctx.put('vm', {'cn': {'VCPU': 2, 'MEMORY_MB': 1024}, 'nfs': {'DISK_GB': 20}}, label='boot with shared disk')
    ctx.put('vm', {'cn': {'VCPU': 4, 'MEMORY_MB': 1024}}, label='resize forgetting the disk drops it')
    ctx.do('nfs usage after drop', b.get_usages, ctx.rp('nfs'))
    ctx.put('vm', {'cn': {'VCPU': 4, 'MEMORY_MB': 1024}, 'nfs': {'DISK_GB': 20}}, label='carry it along')


@scenario
def move_keeping_third_provider(ctx):
    ctx.create('rpA')
    ctx.create('rpB')
    ctx.create('rpC')
    for sym in ('rpA', 'rpB'):
        ctx.set_inv(sym, {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096}})
    ctx.set_inv('rpC', {'DISK_GB': {'total': 500}})
    ctx.put('i1', {'rpA': {'VCPU': 2, 'MEMORY_MB': 1024}, 'rpC': {'DISK_GB': 50}})
    ctx.note('generations before move', [ctx.gen(s) for s in ('rpA', 'rpB', 'rpC')])
    ctx.put('i1', {'rpB': {'VCPU': 2, 'MEMORY_MB': 1024}, 'rpC': {'DISK_GB': 50}}, label='move A -> B keeping C')
    ctx.note('generations after move (A not bumped)', [ctx.gen(s) for s in ('rpA', 'rpB', 'rpC')])
    ctx.put('i1', {}, label='empty the consumer')
    ctx.note('generations after emptying (B and C bumped)', [ctx.gen(s) for s in ('rpA', 'rpB', 'rpC')])
    ctx.put('i1', {'rpA': {'VCPU': 1}}, generation=None, label='new again with null')


@scenario
def multi_consumer_post(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 2048}})
    body = {
        ctx.consumer('c1'): ctx.alloc_body({'cn': {'VCPU': 2}}, None),
        ctx.consumer('c2'): ctx.alloc_body({'cn': {'VCPU': 3, 'MEMORY_MB': 1024}}, None),
    }
    ctx.do('POST two new consumers', b.post_allocations, body)
    ctx.note('gen after POST', ctx.gen('cn'))
    body = {
        ctx.consumer('c1'): ctx.alloc_body({}, 1),
        ctx.consumer('c2'): ctx.alloc_body({'cn': {'VCPU': 6}}, 1),
    }
    ctx.do('POST: empty c1, grow c2 into the freed space', b.post_allocations, body)
    body = {
        ctx.consumer('c2'): ctx.alloc_body({'cn': {'VCPU': 4}}, 2),
        ctx.consumer('c3'): ctx.alloc_body({'cn': {'VCPU': 5}}, None),
    }
    ctx.do('POST over capacity together (all or nothing)', b.post_allocations, body)
    body = {
        ctx.consumer('c2'): ctx.alloc_body({'cn': {'VCPU': 4}}, 2),
        ctx.consumer('c3'): ctx.alloc_body({'cn': {'VCPU': 4}}, None),
    }
    ctx.do('POST fits together', b.post_allocations, body)
    body = {
        ctx.consumer('c2'): ctx.alloc_body({'cn': {'VCPU': 1}}, 3),
        ctx.consumer('c4'): ctx.alloc_body({'cn': {'VCPU': 1}}, 7),
    }
    ctx.do('POST with one bad consumer generation', b.post_allocations, body)
    body = {
        ctx.consumer('c5'): ctx.alloc_body({}, None),
    }
    ctx.do('POST emptying an unknown consumer', b.post_allocations, body)
    ctx.note('c5 generation (leaked empty consumer)', ctx.cgen('c5'))
    body = {
        ctx.consumer('c6'): ctx.alloc_body({'cn': {'VCPU': 1}}, None),
        ctx.consumer('c7'): ctx.alloc_body({'ghost': {'VCPU': 1}}, None),
    }
    ctx.do('POST naming an unknown provider', b.post_allocations, body)
    ctx.do('POST unknown class', b.post_allocations, {
        ctx.consumer('c8'): ctx.alloc_body({'cn': {ctx.rc('nope'): 1}}, None)})
    ctx.do('POST empty body', b.post_allocations, {})


@scenario
def consumer_generations(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 8}})
    ctx.put('c1', {'cn': {'VCPU': 1}}, generation=None, label='new consumer')
    ctx.put('c1', {'cn': {'VCPU': 2}}, generation=None, label='null for an existing consumer')
    ctx.put('c1', {'cn': {'VCPU': 2}}, generation=0, label='stale number')
    ctx.put('c1', {'cn': {'VCPU': 2}}, generation=5, label='future number')
    ctx.put('c2', {'cn': {'VCPU': 1}}, generation=3, label='number for a new consumer')
    ctx.put('c1', {'cn': {'VCPU': 2}}, generation=1, label='right number')
    ctx.do('get c1', b.get_allocations, ctx.consumer('c1'))
    ctx.do('delete c1', b.delete_allocations, ctx.consumer('c1'))
    ctx.note('generations after DELETE (not bumped)', ctx.gen('cn'))
    ctx.do('get c1 after delete', b.get_allocations, ctx.consumer('c1'))
    ctx.do('delete c1 again', b.delete_allocations, ctx.consumer('c1'))
    ctx.put('c1', {'cn': {'VCPU': 1}}, generation=2, label='old number after delete')
    ctx.put('c1', {'cn': {'VCPU': 1}}, generation=None, label='null after delete')
    ctx.put('c3', {}, generation=None, label='empty PUT for an unknown consumer')
    ctx.do('get c3', b.get_allocations, ctx.consumer('c3'))
    ctx.put('c3', {'cn': {'VCPU': 1}}, generation=None, label='c3 with null now refused')
    ctx.put('c3', {'cn': {'VCPU': 1}}, generation=0, label='c3 with 0')
    ctx.do('malformed consumer uuid', b.put_allocations, 'not-a-uuid', ctx.alloc_body({'cn': {'VCPU': 1}}, None))


@scenario
def consumer_attributes(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 8}})
    ctx.put('c1', {'cn': {'VCPU': 1}}, generation=None)
    ctx.put('c1', {'cn': {'VCPU': 1}}, project='other-project', user='other-user', consumer_type='MIGRATION',
            label='change project, user and type')
    ctx.do('get c1', b.get_allocations, ctx.consumer('c1'))
    body = ctx.alloc_body({'cn': {'VCPU': 1}}, 2)
    del body['consumer_type']
    ctx.do('missing consumer_type at 1.38+', b.put_allocations, ctx.consumer('c1'), body)
    body = ctx.alloc_body({'cn': {'VCPU': 1}}, 2)
    body['consumer_type'] = 'lower'
    ctx.do('bad consumer_type', b.put_allocations, ctx.consumer('c1'), body)
    body = ctx.alloc_body({'cn': {'VCPU': 1}}, 2)
    body['project_id'] = ''
    ctx.do('empty project', b.put_allocations, ctx.consumer('c1'), body)
    body = ctx.alloc_body({'cn': {'VCPU': 1}}, 2)
    body['surprise'] = 1
    ctx.do('extra key', b.put_allocations, ctx.consumer('c1'), body)
    body = ctx.alloc_body({'cn': {'VCPU': 1}}, 2)
    body['allocations'][ctx.rp('cn')] = {'resources': {}}
    ctx.do('empty resources', b.put_allocations, ctx.consumer('c1'), body)
    body = ctx.alloc_body({'cn': {'VCPU': 1}}, 2)
    body['allocations'][ctx.rp('cn')]['generation'] = 99
    ctx.do('provider generation in a PUT body is ignored', b.put_allocations, ctx.consumer('c1'), body)
    ctx.do('provider allocations', b.get_provider_allocations, ctx.rp('cn'))
    ctx.do('provider allocations unknown', b.get_provider_allocations, ctx.uuid('ghost'))


@scenario
def unknown_provider_leaks_consumer(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 8}})
    ctx.put('c1', {'cn': {'VCPU': 1}, 'ghost': {'VCPU': 1}}, generation=None,
            label='PUT naming an unknown provider')
    ctx.do('c1 after the failed PUT', b.get_allocations, ctx.consumer('c1'))
    ctx.put('c1', {'cn': {'VCPU': 1}}, generation=None, label='null refused: the consumer exists')
    ctx.put('c1', {'cn': {'VCPU': 1}}, generation=0, label='0 works')
    ctx.put('c2', {'cn': {'VCPU': 100}}, generation=None, label='capacity failure does not leak')
    ctx.put('c2', {'cn': {'VCPU': 1}}, generation=None, label='null still fine for c2')


@scenario
def class_checks_in_allocations(ctx):
    ctx.create('rp1')
    ctx.create('rp2')
    ctx.set_inv('rp1', {'VCPU': {'total': 4}})
    ctx.put('c1', {'rp2': {'VCPU': 1}}, generation=None, label='provider without any inventory')
    ctx.put('c1', {'rp1': {'VCPU': 1}, 'rp2': {'VCPU': 1}}, generation=None,
            label='one provider without inventory')
    ctx.put('c1', {'rp1': {'VCPU': 1, 'MEMORY_MB': 1}}, generation=None, label='one class missing')
    ctx.put('c1', {'rp1': {'VCPU': 5, 'DISK_GB': 1}}, generation=None, label='capacity and missing class')
    ctx.put('c1', {'rp1': {'VCPU': 4}}, generation=None, label='fits')


# -- traits, aggregates, classes ------------------------------------------------

@scenario
def traits_generations(ctx):
    b = ctx.b
    ctx.create('cn')
    t1, t2 = ctx.trait('one'), ctx.trait('two')
    ctx.do('create trait', b.ensure_trait, t1)
    ctx.do('create trait again', b.ensure_trait, t1)
    ctx.do('create trait 2', b.ensure_trait, t2)
    ctx.do('invalid trait name', b.ensure_trait, 'NOT_CUSTOM')
    ctx.do('lowercase trait', b.ensure_trait, 'CUSTOM_lower')
    ctx.do('list mine', lambda: sorted(ctx.normalize(b.list_traits(name='in:%s,%s' % (t1, t2)))))
    prefix = 'startswith:CUSTOM_T%s' % ctx.token.upper()
    ctx.do('list by prefix', lambda: sorted(ctx.normalize(b.list_traits(name=prefix))))
    ctx.do('bad list filter', b.list_traits, name='nocolon')
    ctx.do('set traits', lambda: _sorted_traits(b.set_provider_traits(ctx.rp('cn'), 0, [t1, 'COMPUTE_GRAPHICS_MODEL_VGA'])))
    ctx.do('same set: no bump', lambda: _sorted_traits(b.set_provider_traits(ctx.rp('cn'), 1, ['COMPUTE_GRAPHICS_MODEL_VGA', t1])))
    ctx.do('stale', b.set_provider_traits, ctx.rp('cn'), 0, [t2])
    ctx.do('unknown trait', b.set_provider_traits, ctx.rp('cn'), 1, [ctx.trait('never-created')])
    ctx.do('unknown provider', b.set_provider_traits, ctx.uuid('ghost'), 0, [t1])
    ctx.do('empty trait name', b.set_provider_traits, ctx.rp('cn'), 1, [''])
    ctx.do('change set', lambda: _sorted_traits(b.set_provider_traits(ctx.rp('cn'), 1, [t2])))
    ctx.do('clear', b.set_provider_traits, ctx.rp('cn'), 2, [])
    ctx.do('get', b.get_provider_traits, ctx.rp('cn'))
    ctx.do('get unknown', b.get_provider_traits, ctx.uuid('ghost'))


@scenario
def aggregates_generations(ctx):
    b = ctx.b
    ctx.create('cn')
    a1, a2 = ctx.uuid('agg1'), ctx.uuid('agg2')
    ctx.do('set', b.set_aggregates, ctx.rp('cn'), 0, [a1])
    ctx.do('same again still bumps', b.set_aggregates, ctx.rp('cn'), 1, [a1])
    ctx.do('two', b.set_aggregates, ctx.rp('cn'), 2, [a1, a2])
    ctx.do('stale', b.set_aggregates, ctx.rp('cn'), 0, [a2])
    ctx.do('duplicates', b.set_aggregates, ctx.rp('cn'), 3, [a1, a1])
    ctx.do('not a uuid', b.set_aggregates, ctx.rp('cn'), 3, ['nope'])
    ctx.do('unknown provider', b.set_aggregates, ctx.uuid('ghost'), 0, [a1])
    ctx.do('get', lambda: dict(b.get_aggregates(ctx.rp('cn')),
                               aggregates=sorted(ctx.normalize(b.get_aggregates(ctx.rp('cn'))['aggregates']))))
    ctx.do('clear', b.set_aggregates, ctx.rp('cn'), 3, [])
    ctx.do('get unknown', b.get_aggregates, ctx.uuid('ghost'))


@scenario
def custom_resource_classes(ctx):
    b = ctx.b
    ctx.create('cn')
    rc = ctx.rc('gpu')
    ctx.do('create class', b.ensure_resource_class, rc)
    ctx.do('create class again', b.ensure_resource_class, rc)
    ctx.do('standard name refused', b.ensure_resource_class, 'VCPU')
    ctx.do('bad name', b.ensure_resource_class, 'CUSTOM_bad')
    ctx.do('listed', lambda: rc in b.list_resource_classes())
    ctx.do('standard ones listed', lambda: all(n in b.list_resource_classes()
                                               for n in ('VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU', 'PCPU')))
    ctx.set_inv('cn', {rc: {'total': 2}}, label='inventory of the custom class')
    ctx.put('c1', {'cn': {rc: 2}}, generation=None, label='allocate it')


# -- reshaper ------------------------------------------------------------------

def _vgpu_host(ctx, vgpus=8):
    """A compute node with VCPU and a flat VGPU inventory, two instances holding VGPUs."""
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}, 'VGPU': {'total': vgpus}})
    ctx.put('vm1', {'cn': {'VCPU': 2, 'MEMORY_MB': 2048, 'VGPU': 2}}, generation=None)
    ctx.put('vm2', {'cn': {'VCPU': 2, 'MEMORY_MB': 2048, 'VGPU': 1}}, generation=None)
    ctx.create('gpu1', parent='cn')
    ctx.create('gpu2', parent='cn')


def _reshape_body(ctx, inventories, allocations, consumer_generations=None):
    gens = consumer_generations or {}
    body = {'inventories': {}, 'allocations': {}}
    for sym, (gen, invs) in inventories.items():
        body['inventories'][ctx.rp(sym)] = {'resource_provider_generation': gen, 'inventories': invs}
    for csym, allocs in allocations.items():
        gen = gens[csym] if csym in gens else ctx.cgen(csym)
        body['allocations'][ctx.consumer(csym)] = ctx.alloc_body(allocs, gen)
    return body


def _snapshot_note(ctx, label):
    ctx.note(label, dict((s, ctx.gen(s)) for s in ('cn', 'gpu1', 'gpu2')))


@scenario
def reshape_flat_vgpu_to_children(ctx):
    _vgpu_host(ctx)
    _snapshot_note(ctx, 'generations before')
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}),
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 4, 'max_unit': 4}}),
        'gpu2': (ctx.gen('gpu2'), {'VGPU': {'total': 4, 'max_unit': 4}}),
    }, {
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 2}},
        'vm2': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu2': {'VGPU': 1}},
    })
    ctx.do('reshape', ctx.b.reshape, body)
    _snapshot_note(ctx, 'generations after (+3 cn, +3 gpus)')
    ctx.do('reshape again with the old body (stale)', ctx.b.reshape, body)


@scenario
def reshape_inventory_in_use(ctx):
    _vgpu_host(ctx)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}),
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 4}}),
    }, {
        # vm2 is forgotten: its VGPU stays on cn, whose VGPU inventory goes away
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 2}},
    })
    ctx.do('reshape dropping an allocated class', ctx.b.reshape, body)
    _snapshot_note(ctx, 'nothing changed')


@scenario
def reshape_capacity(ctx):
    _vgpu_host(ctx)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}),
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 2}}),
    }, {
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 2}},
        'vm2': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 1}},
    })
    ctx.do('reshape over the child capacity', ctx.b.reshape, body)
    body = _reshape_body(ctx, {
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 4, 'max_unit': 1}}),
    }, {
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 2}},
    })
    ctx.do('reshape violating max_unit', ctx.b.reshape, body)
    _snapshot_note(ctx, 'nothing changed')


@scenario
def reshape_stale_generations(ctx):
    _vgpu_host(ctx)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn') - 1, {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}),
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 8}}),
    }, {
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 2}},
        'vm2': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 1}},
    })
    ctx.do('stale provider generation', ctx.b.reshape, body)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}),
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 8}}),
    }, {
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 2}},
        'vm2': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {'VGPU': 1}},
    }, consumer_generations={'vm1': 1, 'vm2': 7})
    ctx.do('stale consumer generation', ctx.b.reshape, body)
    body['allocations'][ctx.consumer('vm2')]['consumer_generation'] = None
    ctx.do('null generation for an existing consumer', ctx.b.reshape, body)
    _snapshot_note(ctx, 'nothing changed')


@scenario
def reshape_unknown_things(ctx):
    _vgpu_host(ctx)
    body = _reshape_body(ctx, {
        'gpu1': (ctx.gen('gpu1'), {ctx.rc('never'): {'total': 1}}),
    }, {})
    ctx.do('unknown class in inventories', ctx.b.reshape, body)
    body = _reshape_body(ctx, {
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 4}}),
    }, {'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {ctx.rc('never'): 2}}})
    ctx.do('unknown class in allocations', ctx.b.reshape, body)
    body = _reshape_body(ctx, {
        'ghost': (0, {'VGPU': {'total': 4}}),
    }, {})
    ctx.do('unknown provider in inventories', ctx.b.reshape, body)
    body = _reshape_body(ctx, {
        'gpu1': (ctx.gen('gpu1'), {'VGPU': {'total': 4}}),
    }, {'vm3': {'ghost2': {'VGPU': 1}}}, consumer_generations={'vm3': None})
    ctx.do('unknown provider in allocations', ctx.b.reshape, body)
    ctx.note('vm3 left behind at generation', ctx.cgen('vm3'))
    ctx.do('empty inventories', ctx.b.reshape, {'inventories': {}, 'allocations': {}})
    ctx.do('missing allocations', ctx.b.reshape, {'inventories': {ctx.rp('gpu1'): {
        'resource_provider_generation': 0, 'inventories': {}}}})
    _snapshot_note(ctx, 'nothing changed')


@scenario
def reshape_generation_deltas(ctx):
    _vgpu_host(ctx)
    ctx.create('gpu3', parent='cn')
    ctx.set_inv('gpu3', {'VGPU': {'total': 2}})
    before = dict((s, ctx.gen(s)) for s in ('cn', 'gpu1', 'gpu2', 'gpu3'))
    body = _reshape_body(ctx, {
        'gpu1': (before['gpu1'], {}),                      # {} and not in allocations: +1
        'gpu2': (before['gpu2'], {'VGPU': {'total': 2}}),  # non-empty, not in allocations: +2
        'gpu3': (before['gpu3'], {}),                      # {} and in allocations (emptied): would be +2
    }, {})
    ctx.do('reshape: empty and non-empty inventories', ctx.b.reshape, body)
    ctx.note('deltas', dict((s, ctx.gen(s) - before[s]) for s in before))
    before = dict((s, ctx.gen(s)) for s in ('cn', 'gpu1', 'gpu2', 'gpu3'))
    body = _reshape_body(ctx, {
        'gpu2': (before['gpu2'], {'VGPU': {'total': 2}}),
    }, {
        'vm2': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048, 'VGPU': 1}},    # unchanged allocations on cn only
    })
    ctx.do('reshape: consumer on a provider not in inventories', ctx.b.reshape, body)
    ctx.note('deltas 2', dict((s, ctx.gen(s) - before[s]) for s in before))
    before = dict((s, ctx.gen(s)) for s in ('cn', 'gpu1', 'gpu2', 'gpu3'))
    body = _reshape_body(ctx, {
        'gpu1': (before['gpu1'], {}),
    }, {
        'vm2': {},                                                  # empty vm2 entirely
    })
    ctx.do('reshape: emptying a consumer bumps the providers it leaves', ctx.b.reshape, body)
    ctx.note('deltas 3', dict((s, ctx.gen(s) - before[s]) for s in before))
    ctx.note('vm2 after', ctx.b.get_allocations(ctx.consumer('vm2')))


@scenario
def reshape_lower_and_reserved(ctx):
    _vgpu_host(ctx)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16, 'reserved': 20}, 'MEMORY_MB': {'total': 32768},
                               'VGPU': {'total': 1}}),
    }, {})
    ctx.do('reshaper accepts reserved > total and total below usage', ctx.b.reshape, body)
    ctx.do('usages', ctx.b.get_usages, ctx.rp('cn'))
    ctx.do('updating another class checks only that record', ctx.b.set_inventory, ctx.rp('cn'), 'MEMORY_MB',
           ctx.gen('cn'), {'total': 32768, 'reserved': 1})
    ctx.do('creating a class re-checks every record (VCPU capacity < 0)', ctx.b.set_inventory, ctx.rp('cn'),
           'DISK_GB', ctx.gen('cn'), {'total': 10})
    ctx.set_inv('cn', {'VCPU': {'total': 16, 'reserved': 20}, 'MEMORY_MB': {'total': 32768}, 'VGPU': {'total': 1}},
                label='the inventory endpoints refuse what the reshaper accepted')
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}, 'VGPU': {'total': 1}}),
    }, {'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048, 'VGPU': 2}}})
    ctx.do('rewriting vm1 unchanged while over capacity (not worse)', ctx.b.reshape, body)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}, 'VGPU': {'total': 1}}),
    }, {'vm3': {'cn': {'VGPU': 1}}}, consumer_generations={'vm3': None})
    ctx.do('a new VGPU consumer while over capacity', ctx.b.reshape, body)


@scenario
def reshape_new_consumer_and_class(ctx):
    b = ctx.b
    _vgpu_host(ctx)
    rc = ctx.rc('nvidia_222')
    ctx.do('custom class', b.ensure_resource_class, rc)
    body = _reshape_body(ctx, {
        'cn': (ctx.gen('cn'), {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}),
        'gpu1': (ctx.gen('gpu1'), {rc: {'total': 4}}),
        'gpu2': (ctx.gen('gpu2'), {rc: {'total': 4}}),
    }, {
        'vm1': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu1': {rc: 1}, 'gpu2': {rc: 1}},
        'vm2': {'cn': {'VCPU': 2, 'MEMORY_MB': 2048}, 'gpu2': {rc: 1}},
        'vm9': {'gpu1': {rc: 1}},
    }, consumer_generations={'vm9': None})
    ctx.do('reshape into a custom class with a new consumer', b.reshape, body)
    ctx.do('vm9', b.get_allocations, ctx.consumer('vm9'))


# -- a longer life -------------------------------------------------------------

@scenario
def compute_node_life(ctx):
    b = ctx.b
    ctx.create('cn')
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'allocation_ratio': 2.0}, 'MEMORY_MB': {'total': 4096, 'reserved': 512}})
    for i in range(4):
        ctx.put('vm%d' % i, {'cn': {'VCPU': 2, 'MEMORY_MB': 896}}, generation=None)
    ctx.put('vm4', {'cn': {'VCPU': 1, 'MEMORY_MB': 1}}, generation=None, label='memory full')
    ctx.do('delete vm0', b.delete_allocations, ctx.consumer('vm0'))
    ctx.put('vm4', {'cn': {'VCPU': 1, 'MEMORY_MB': 512}}, generation=None, label='fits after delete')
    ctx.do('usages', b.get_usages, ctx.rp('cn'))
    ctx.set_inv('cn', {'VCPU': {'total': 4, 'allocation_ratio': 1.0}, 'MEMORY_MB': {'total': 4096, 'reserved': 512}},
                label='lower ratio below usage')
    ctx.put('vm1', {'cn': {'VCPU': 1, 'MEMORY_MB': 896}}, label='vm1 shrinks')
    ctx.put('vm1', {'cn': {'VCPU': 3, 'MEMORY_MB': 896}}, label='vm1 grows while over')
    ctx.do('usages end', b.get_usages, ctx.rp('cn'))


def ids():
    return [s.__name__ for s in SCENARIOS]


__all__ = ['SCENARIOS', 'ids']
