# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report drawn from Jinja2 templates: report.html (autoescaped) and report.md.

:mod:`.data` builds the data (:func:`.data.build_report`); this module draws it.  Python
keeps only what a template cannot reasonably compute: the geometry of the provider-tree
pictures (:func:`tree_picture`: box, edge and bar coordinates, already formatted), the rows
of a tree in Markdown and of the inventory table, the captions.  Every word and every tag of
the page is in the templates of :data:`TEMPLATE_DIR` (``templates/fleet_report/`` at the root
of the collection): ``report.html.j2`` (with ``report.css`` and the ``tree.svg.j2`` macro) and
``report.md.j2``.

An operator's own template (``html_template`` / ``markdown_template`` of the fleet_report
module) is loaded from its own folder first, then from :data:`TEMPLATE_DIR`, so it can
include or import the shipped pieces (``{% import 'tree.svg.j2' as svg %}``).  The HTML
environment escapes every value (``autoescape``); the Markdown one escapes nothing by itself,
templates use the ``md`` filter for text in tables and emphasis and ``code`` for commands.

jinja2 is imported when a report is rendered, not when this module is imported: the
fleet_report module runs without it, its action plugin renders on the controller, where
ansible-core brings jinja2.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from .. import journal as _journal
from ..errors import REPORT_TEMPLATE
from ..rules import inventory as inventory_rules
from ..version import COLLECTION_VERSION
from .context import context_rows
from .data import nova_compute_text, summary_line
from .labels import (
    STATUS_COLOURS,
    STATUSES,
    ReportError,
    format_duration,
    format_number,
    format_time,
    short_reason,
    short_uuid as _short,
    status_label,
)
from .trees import external_holdings, provider_tree

#: the shipped templates: ``templates/fleet_report/`` at the root of the collection
TEMPLATE_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..',
                                             'templates', 'fleet_report'))
HTML_TEMPLATE = 'report.html.j2'
MARKDOWN_TEMPLATE = 'report.md.j2'
SVG_TEMPLATE = 'tree.svg.j2'

# the geometry of a provider-tree picture (pixels)
BOX_W = 272
HEAD_H = 24
ROW_H = 17
GAP_X = 18
GAP_Y = 34
PAD = 10
BAR_W = 72


class TemplateError(ReportError):
    """A report template cannot be found, read or rendered."""

    default_code = REPORT_TEMPLATE


# ---------------------------------------------------------------------------
# text helpers the templates use (filters and globals)

#: an HTML character reference (``&lt;``, ``&#60;``, ``&#x3c;``): its ``&`` is escaped so it shows as written
_CHAR_REF = re.compile(r'&(?=#?[0-9A-Za-z]+;)')


def md(text):
    """Escape the characters that would break a Markdown table cell or emphasis, and every ``<``
    as ``&lt;``: a backslash before it is no escape for every Markdown renderer (Python-Markdown
    keeps it, and the HTML tag after it: ``<img onerror=...>`` in a host name would run in a
    viewer that renders HTML), a character reference is one for all of them."""
    text = '' if text is None else str(text)
    text = _CHAR_REF.sub('&amp;', text)
    for char in ('\\', '|', '*', '`', '>', '[', ']'):
        text = text.replace(char, '\\' + char)
    return text.replace('<', '&lt;').replace('\n', ' ')


def code(text):
    """Markdown inline code (a backquote inside becomes a quote)."""
    return '`%s`' % str(text).replace('`', "'")


def anchor(node):
    """The id of a node's section in report.html."""
    safe = ''.join(c if c.isalnum() or c in '-_.' else '-' for c in str(node))
    return 'node-' + safe


def next_step_parts(step):
    """``(text, command)`` of a next step; the command (after the last ': ansible-playbook') or None."""
    head, sep, command = step.rpartition(': ansible-playbook ')
    if not sep:
        return step, None
    return head, 'ansible-playbook ' + command


def provider_name(names, uuid):
    return names.get(uuid, _short(uuid))


def consumer_label(entry, consumer):
    name = entry['consumer_names'].get(consumer)
    return '%s (%s)' % (consumer, name) if name else consumer


def single_caption(entry):
    """The caption of the one picture of a node whose tree did not change."""
    if entry['status'] == 'rolled_back':
        return 'provider tree after the rollback'
    if entry['touched']:
        return 'provider tree (now)'
    if entry['status'] in ('failed', 'deferred'):
        return 'provider tree (left as it was)'
    return 'provider tree (unchanged)'


def captions(entry, mode):
    """``(before, after)`` captions of a node's two pictures."""
    before = 'before (from its snapshot)' if entry['snapshot'] and entry['touched'] else 'before'
    after = 'after (planned)' if mode == 'plan' else 'after'
    if entry['touched'] and mode != 'plan':
        after = 'after (read from Placement now)'
    return before, after


def stop_failed_touched(report):
    """Whether the node the roll stopped at failed after its reshape was applied."""
    stop = report['stopped'] or {}
    return any(e['node'] == stop.get('node') and e['touched'] and e['status'] == 'failed' for e in report['nodes'])


def cards(report):
    """``[(label, count)]`` of the figures at the top of report.html."""
    totals = report['totals']
    counts = totals['statuses']
    mode = report['mode']
    out = [('nodes', totals['nodes'])]
    for status in STATUSES:
        if counts.get(status) or status in ('noop', 'deferred', 'failed'):
            out.append((status_label(status, mode), counts.get(status, 0)))
    if mode != 'plan':
        out.append(('trees changed', totals['touched']))
    return out + figure_rows(report)


#: the figures a report always shows, per journal mode (the others when they are not 0)
_ALWAYS = {'would': ('consumers_moved', 'allocations_moved', 'providers_created'),
           'did': ('consumers_moved', 'allocations_moved', 'providers_created'),
           'restored': ('consumers_moved', 'allocations_moved', 'providers_removed', 'providers_left')}


def figure_rows(report):
    """``[(words, count)]`` of the run's figures, in the words of what it did (would / did / restored):
    the sums of the nodes' journals (data.build_report's ``totals.figures``)."""
    totals = report['totals']
    words = totals.get('words') or ('would' if report['mode'] == 'plan' else 'did')
    figures = totals.get('figures') or {'consumers_moved': totals['consumers_moved'],
                                        'allocations_moved': totals['allocations_moved'],
                                        'providers_created': totals['providers_created']}
    rows = []
    for key in _journal.FIGURES:
        text = _journal.figure_text(key, words)
        if text and (figures.get(key) or key in _ALWAYS.get(words, ())):
            rows.append((text, figures.get(key, 0)))
    return rows


def written_heading(entry, mode):
    """The heading of a node's list of writes, in the words of its journal."""
    journal_mode = entry.get('journal_mode') or ('would' if mode == 'plan' else 'did')
    return {'would': 'To be written (plan)', 'restored': 'Restored by this rollback'}.get(
        journal_mode, 'Written by this run')


def inventory_text(tree, uuid):
    """``VGPU 3/8, VCPU 6/64`` (usage/capacity per class) of one provider (``tree``: a normalized
    tree or its :class:`.tree.ProviderTree`)."""
    view = provider_tree(tree)
    invs = view.raw_inventory(uuid)
    parts = []
    for rc in sorted(invs):
        parts.append('%s %s/%s' % (rc, format_number(view.used(uuid, rc)),
                                   format_number(inventory_rules.capacity(invs[rc]))))
    return ', '.join(parts) if parts else 'no inventory'


def tree_rows(tree, created=()):
    """``[{"depth", "name", "new", "inventory"}]`` of a tree, depth first (report.md draws it as a list)."""
    view = provider_tree(tree)
    return [{'depth': depth, 'name': view.name(uuid), 'new': uuid in created, 'inventory': inventory_text(view, uuid)}
            for uuid, depth in view.depth_first()]


def inventory_rows(entry):
    """The rows of a node's inventory table: every class after (with its total before), then those removed."""
    before, after = provider_tree(entry['before']), provider_tree(entry['after'])
    number = format_number
    rows = []
    for uuid, _depth in after.depth_first():
        invs = after.raw_inventory(uuid)
        for rc in sorted(invs):
            inv = invs[rc]
            old = before.raw_inventory(uuid).get(rc)
            rows.append({'provider': after.name(uuid), 'rc': rc, 'removed': False,
                         'was': '-' if old is None else number(old['total']), 'total': number(inv['total']),
                         'reserved': '%d' % inv['reserved'], 'max_unit': '%d' % inv['max_unit'],
                         'ratio': number(inv['allocation_ratio']),
                         'used': number(after.used(uuid, rc)), 'capacity': number(inventory_rules.capacity(inv))})
    for uuid, _depth in before.depth_first():
        invs = before.raw_inventory(uuid)
        for rc in sorted(invs):
            if rc in after.raw_inventory(uuid):
                continue
            rows.append({'provider': before.name(uuid), 'rc': rc, 'removed': True, 'was': number(invs[rc]['total'])})
    return rows


# ---------------------------------------------------------------------------
# the geometry of a provider-tree picture

def _box_height(prov):
    rows = max(len(prov['inventories']), 1)
    return HEAD_H + rows * ROW_H + 6


def _clip(text, width_chars):
    text = str(text)
    if len(text) <= width_chars:
        return text
    return text[:width_chars - 1] + '\u2026'


def _layout_tree(view, box_w=BOX_W):
    """x/y positions: leaves side by side, a parent centred over its children (``view``: the
    tree's :class:`.tree.ProviderTree`)."""
    providers = view.providers
    pos = {}
    levels = {}
    for uuid, depth in view.depth_first():
        levels[uuid] = depth
    slot = [0]

    def place(uuid, seen):
        seen.add(uuid)
        kids = [k for k in view.children(uuid) if k not in seen]
        if not kids:
            x = slot[0] * (box_w + GAP_X)
            slot[0] += 1
        else:
            xs = [place(k, seen) for k in kids]
            x = (xs[0] + xs[-1]) / 2.0
        pos[uuid] = x
        return x

    seen = set()
    for root in view.roots:
        place(root, seen)
    for uuid in view.uuids():
        if uuid not in seen:
            place(uuid, seen)
    depth_h = {}
    for uuid, depth in levels.items():
        depth_h[depth] = max(depth_h.get(depth, 0), _box_height(providers[uuid]))
    ys = {}
    y = 0
    for depth in sorted(depth_h):
        ys[depth] = y
        y += depth_h[depth] + GAP_Y
    return dict((u, (pos[u], ys[levels.get(u, 0)])) for u in providers), slot[0], y - GAP_Y


def bar_colour(used, cap):
    if cap <= 0:
        return '#cf222e' if used > 0 else '#d0d7de'
    ratio = float(used) / cap
    if ratio > 1:
        return '#cf222e'
    if ratio >= 0.8:
        return '#bf8700'
    return '#2da44e'


def _f(value):
    return '%.1f' % value


def tree_picture(tree, created=(), removed=(), external=None, names=None, label=''):
    """What ``tree.svg.j2`` draws of one provider tree: sizes, edges, boxes with their usage bars.

    ``created`` providers get a green outline, ``removed`` a red dashed one.
    ``external``: ``{rp uuid: {RC: n}}`` amounts the tree's consumers hold on providers
    outside the tree (a sharing DISK_GB pool), drawn as dashed boxes.  Coordinates are
    formatted (``"%.1f"``); ``empty`` is true for a tree without providers.
    """
    providers = tree['providers']
    names = names or {}
    external = external or {}
    picture = {'label': label or 'provider tree', 'empty': not providers, 'edges': [], 'boxes': [], 'external': []}
    if not providers:
        return picture
    longest = max([len(rc) for p in providers.values() for rc in p['inventories']]
                  + [len(rc) for res in external.values() for rc in res] + [9])
    bar_x = 16 + int(longest * 8.6)  # class names are capitals: ~8.5 px each at 12 px
    box_w = max(BOX_W, bar_x + BAR_W + 96)
    name_chars = int((box_w - 16) / 7.2)
    view = provider_tree(tree)
    pos, slots, height = _layout_tree(view, box_w)
    width = slots * (box_w + GAP_X) - GAP_X
    ext_items = sorted(external.items(), key=lambda kv: names.get(kv[0], kv[0]))
    ext_y = height + GAP_Y if ext_items else height
    ext_h = 0
    for _rp, resources in ext_items:
        ext_h = max(ext_h, HEAD_H + max(len(resources), 1) * ROW_H + 6)
    if ext_items:
        width = max(width, len(ext_items) * (box_w + GAP_X) - GAP_X)
        height = ext_y + ext_h
    picture['width'] = int(width + 2 * PAD)
    picture['height'] = int(height + 2 * PAD)
    picture['box_w'] = box_w
    # edges first, so boxes are drawn over them
    for uuid in view.providers:
        parent = view.parent(uuid)
        if parent in pos:
            px, py = pos[parent]
            cx, cy = pos[uuid]
            x1 = PAD + px + box_w / 2.0
            y1 = PAD + py + _box_height(providers[parent])
            x2 = PAD + cx + box_w / 2.0
            y2 = PAD + cy
            picture['edges'].append('M%s %s V%s H%s V%s' % (_f(x1), _f(y1), _f((y1 + y2) / 2.0), _f(x2), _f(y2)))
    for uuid, _depth in view.depth_first():
        prov = providers[uuid]
        x, y = pos[uuid]
        x += PAD
        y += PAD
        box = {'uuid': uuid, 'name': prov['name'], 'clipped': _clip(prov['name'], name_chars),
               'traits': prov['traits'], 'created': uuid in created, 'removed': uuid in removed,
               'x': _f(x), 'y': _f(y), 'h': _box_height(prov), 'text_x': _f(x + 8), 'name_y': _f(y + 16),
               'empty_y': _f(y + HEAD_H + 12), 'rows': []}
        for i, rc in enumerate(sorted(prov['inventories'])):
            cap = inventory_rules.capacity(prov['inventories'][rc])
            used = view.used(uuid, rc)
            ry = y + HEAD_H + i * ROW_H
            frac = 0.0 if cap <= 0 else min(float(used) / cap, 1.0)
            box['rows'].append({'rc': rc, 'text_y': _f(ry + 11), 'bar_x': _f(x + bar_x), 'bar_y': _f(ry + 3),
                                'bar_w': BAR_W, 'fill_w': _f(max(BAR_W * frac, 1.5)) if frac > 0 else None,
                                'colour': bar_colour(used, cap), 'num_x': _f(x + bar_x + BAR_W + 6),
                                'used': format_number(used), 'capacity': format_number(cap)})
        picture['boxes'].append(box)
    for i, (rp, resources) in enumerate(ext_items):
        x = PAD + i * (box_w + GAP_X)
        y = PAD + ext_y
        name = names.get(rp, _short(rp))
        ext = {'uuid': rp, 'name': name, 'clipped': _clip(name, name_chars - 9), 'x': _f(x), 'y': _f(y),
               'h': HEAD_H + max(len(resources), 1) * ROW_H + 6, 'text_x': _f(x + 8), 'name_y': _f(y + 16),
               'rows': []}
        for j, rc in enumerate(sorted(resources)):
            ry = y + HEAD_H + j * ROW_H
            ext['rows'].append({'rc': rc, 'text_y': _f(ry + 11), 'num_x': _f(x + bar_x),
                                'amount': format_number(resources[rc])})
        picture['external'].append(ext)
    return picture


def node_pictures(entry, report):
    """The pictures of a node's section: ``[{"caption", "picture"}]``, None standing for a tree not read."""
    names = report['names']
    ext_before = external_holdings(entry['before'])
    ext_after = external_holdings(entry['after'])
    before_cap, after_cap = captions(entry, report['mode'])
    if not entry['after_known']:
        return [{'caption': before_cap, 'picture': tree_picture(entry['before'], external=ext_before, names=names,
                                                                label='%s before' % entry['node'])},
                {'caption': 'after', 'picture': None}]
    if entry['changed_tree']:
        return [{'caption': before_cap,
                 'picture': tree_picture(entry['before'], removed=entry['removed'], external=ext_before,
                                         names=names, label='%s before' % entry['node'])},
                {'caption': after_cap,
                 'picture': tree_picture(entry['after'], created=entry['created'], external=ext_after,
                                         names=names, label='%s after' % entry['node'])}]
    return [{'caption': single_caption(entry),
             'picture': tree_picture(entry['after'], external=ext_after, names=names, label=entry['node'])}]


# ---------------------------------------------------------------------------
# the environments

def _jinja2():
    try:
        import jinja2  # imported when a report is rendered: the fleet_report module runs without jinja2
    except ImportError:
        raise TemplateError('rendering the report needs jinja2 in this Python; the fleet_report action '
                            'plugin renders it on the controller, where ansible-core provides it')
    return jinja2


def _globals(report=None):
    mode = (report or {}).get('mode', 'apply')
    return {
        'label': lambda status: status_label(status, mode),
        'colour': lambda status: STATUS_COLOURS.get(status, '#57606a'),
        'format_duration': format_duration,
        'format_time': format_time,
        'number': format_number,
        'statuses': STATUSES,
        'context_rows': context_rows,
        'summary_line': summary_line,
        'next_step_parts': next_step_parts,
        'provider_name': provider_name,
        'consumer_label': consumer_label,
        'single_caption': single_caption,
        'captions': captions,
        'stop_failed_touched': stop_failed_touched,
        'cards': cards,
        'figure_rows': figure_rows,
        'figure_words': lambda key: _journal.figure_text(key, ((report or {}).get('totals') or {}).get('words') or (
            'would' if mode == 'plan' else 'did')),
        'written_heading': lambda entry: written_heading(entry, mode),
        'tree_rows': tree_rows,
        'inventory_rows': inventory_rows,
        'node_pictures': node_pictures,
        'tree_picture': tree_picture,
        'nova_compute_text': nova_compute_text,
        'short_reason': short_reason,
        'collection_version': COLLECTION_VERSION,
    }


def environment(html, template=None):
    """The Jinja2 environment of report.html (``html``: autoescaped) or report.md.

    ``template``: the path of an operator's template; its folder is searched before
    :data:`TEMPLATE_DIR`.  Returns ``(environment, template name)``.
    """
    jinja2 = _jinja2()
    search = [TEMPLATE_DIR]
    name = HTML_TEMPLATE if html else MARKDOWN_TEMPLATE
    if template:
        path = os.path.abspath(os.path.expanduser(str(template)))
        if not os.path.isfile(path):
            raise TemplateError('the report template %s does not exist (or is not a file)' % path)
        search.insert(0, os.path.dirname(path))
        name = os.path.basename(path)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(search), autoescape=bool(html), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             extensions=['jinja2.ext.do'])
    env.filters['md'] = md
    env.filters['code'] = code
    env.filters['anchor'] = anchor
    env.filters['short'] = _short
    return env, name


def _render(html, report, template=None):
    jinja2 = _jinja2()
    env, name = environment(html, template)
    try:
        return env.get_template(name).render(report=report, **_globals(report))
    except jinja2.TemplateNotFound as exc:
        raise TemplateError('report template %s not found (searched %s)' % (exc, ', '.join(env.loader.searchpath)))
    except jinja2.TemplateError as exc:
        where = getattr(exc, 'filename', None) or name
        line = getattr(exc, 'lineno', None)
        raise TemplateError('the report template %s%s cannot be rendered: %s: %s' % (
            where, (' (line %d)' % line) if line else '', type(exc).__name__, exc))


def render_html(report, template=None):
    """report.html: one self-contained page (styles and inline SVG pictures), every value escaped."""
    return _render(True, report, template)


def render_markdown(report, template=None):
    """report.md (ending with one newline)."""
    return _render(False, report, template).rstrip('\n') + '\n'


def tree_svg(tree, created=(), removed=(), external=None, names=None, label=''):
    """One provider tree as an inline SVG (the ``tree`` macro of ``tree.svg.j2``)."""
    env, _name = environment(True)
    macro = env.get_template(SVG_TEMPLATE).module.tree
    return str(macro(tree_picture(tree, created, removed, external, names, label)))
