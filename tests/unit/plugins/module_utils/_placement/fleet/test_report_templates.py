# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's Jinja2 templates: escaping, the operator's own templates, template errors, and the
fleet_report / placement_preflight modules failing without a traceback."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report, render as report_render
from ansible_collections.placement.upgrade.plugins.modules import fleet_report, placement_preflight

from module_runner import run_module_main
from test_report import POOL, _trees

EVIL = 'cn-<script>alert("x")</script> & \'q\''


def _evil_report(mode='apply'):
    before, after = _trees()
    after['providers'][POOL] = {'name': 'pool <b>"&"</b>', 'parent_provider_uuid': None, 'inventories': {}}
    records = [
        {'node': EVIL, 'status': 'reshaped', 'before': before, 'after': after, 'reason': '<i>why</i> & "how"',
         'snapshot': '/s/<a>.json', 'warnings': ['<script>w</script>'], 'consumer_names': {'c1': '<img src=x>'},
         'verification': [{'check': '<c>', 'passed': False, 'detail': 'd&<e>'}]},
        {'node': 'cn-2 "two"', 'status': 'failed', 'reason': 'boom <script>x</script>', 'before': before},
    ]
    context = {'playbook': '<script>pb</script>', 'inventory': 'inv & "x"', 'awx_job_template': "t'<1>"}
    return report.build_report(records, hosts=[EVIL, 'cn-2 "two"', 'cn-3 <u>'], title='<script>t</script> & "q"',
                               mode=mode, run_id='<run>&', context=context)


@pytest.mark.parametrize('mode', ['apply', 'plan'])
def test_html_escapes_every_crafted_text(mode):
    html = report.render_html(_evil_report(mode))
    assert '<script' not in html and '<img' not in html and '<i>why' not in html and '<b>"' not in html
    assert '&lt;i&gt;why&lt;/i&gt; &amp; &#34;how&#34;' in html
    assert '&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;q&#39;' in html
    assert '<title>&lt;script&gt;t&lt;/script&gt; &amp; &#34;q&#34;</title>' in html
    assert 'run &lt;run&gt;&amp; &middot;' in html
    assert '&lt;script&gt;pb&lt;/script&gt;' in html and 'inv &amp; &#34;x&#34;' in html
    assert 'boom &lt;script&gt;x&lt;/script&gt;' in html and '&lt;img src=x&gt;' in html
    assert 'pool &lt;b&gt;&#34;&amp;&#34;&lt;/b&gt;' in html
    # the anchors stay plain, the pictures stay valid SVG
    assert re.search(r'<section class="node" id="node-cn--script-alert--x----script-----q-">', html)
    for svg in re.findall(r'<svg .*?</svg>', html, flags=re.S):
        ET.fromstring(svg)


def test_markdown_escapes_table_and_emphasis_characters():
    text = report.render_markdown(_evil_report())
    assert '## cn-&lt;script\\>alert("x")&lt;/script\\> & \'q\': reshaped' in text
    assert '| run | &lt;run\\>& |' in text
    assert '- FAILED &lt;c\\>: d&&lt;e\\>\n' in text
    assert text.endswith('\n') and not text.endswith('\n\n')


IMG = '<img src=x onerror=alert(1)>'
SVG = '<svg onload=alert(2)>'
#: the one tag report.md writes itself: each node section's anchor
ANCHOR = re.compile(r'<a id="node-[A-Za-z0-9._-]*"></a>')


def _markup_outside_code(text):
    """Every ``<`` of report.md outside its code spans (which every renderer shows as text) and
    outside its own anchors: what a renderer could take for HTML."""
    found = []
    for line in text.splitlines():
        bare = ANCHOR.sub('', re.sub(r'`[^`]*`', '', line))
        if '<' in bare:
            found.append(line)
    return found


@pytest.mark.parametrize('mode', ['apply', 'plan'])
def test_markdown_carries_no_html_from_host_names_run_ids_or_reasons(mode):
    """Host names, the run id, reasons, warnings, consumer names, checks, context: a ``\\<`` is no
    escape for every renderer (Python-Markdown keeps the tag after it), so report.md had the
    ``<img onerror>`` and ``<svg onload>`` of its hosts and run id as HTML: every ``<`` from outside
    is ``&lt;`` there, as in report.html."""
    before, after = _trees()
    records = [
        {'node': 'cn-' + IMG, 'status': 'reshaped', 'before': before, 'after': after, 'reason': 'r ' + SVG,
         'snapshot': '/s/x.json', 'warnings': ['w ' + SVG], 'consumer_names': {'c1': IMG},
         'verification': [{'check': SVG, 'passed': False, 'detail': IMG}]},
        {'node': 'cn2' + SVG, 'status': 'failed', 'reason': 'boom ' + IMG, 'before': before},
        {'node': 'cn4' + SVG, 'status': 'deferred', 'reason': 'later &lt;b&gt; ' + IMG, 'before': before},
    ]
    context = {'playbook': IMG, 'inventory': SVG, 'awx_job_template': IMG}
    built = report.build_report(records, hosts=['cn-' + IMG, 'cn2' + SVG, 'cn3' + IMG, 'cn4' + SVG], title=SVG,
                                mode=mode, run_id='r' + IMG, context=context)
    text = report.render_markdown(built)
    assert _markup_outside_code(text) == []
    # the values are all there, as text: the hosts, the run id, a reason (a reference shown as written)
    assert '## cn-&lt;img src=x onerror=alert(1)\\>: ' in text
    assert '| run | r&lt;img src=x onerror=alert(1)\\> |' in text
    assert 'later &amp;lt;b&amp;gt; &lt;img src=x onerror=alert(1)\\>' in text
    assert text.count('&lt;svg onload=alert(2)\\>') >= 3


def test_tree_svg_is_the_template_macro():
    before, _after = _trees()
    svg = report.tree_svg(report.normalize_tree(before), label='a<b>')
    assert svg.startswith('<svg ') and 'aria-label="a&lt;b&gt;"' in svg
    ET.fromstring(svg)
    assert report.tree_svg({'providers': {}, 'allocations': {}}).endswith('no providers</text></svg>')


def test_operator_templates_import_the_shipped_pieces(tmp_path):
    html_tpl = tmp_path / 'mine.html.j2'
    html_tpl.write_text("{% import 'tree.svg.j2' as svg %}<h1>{{ report.title }}</h1>"
                        "{% for e in report.nodes %}<p>{{ e.node }}: {{ label(e.status) }}</p>"
                        "{{ svg.tree(tree_picture(e.after)) }}{% endfor %}<style>{% include 'report.css' %}</style>\n")
    md_tpl = tmp_path / 'mine.md.j2'
    md_tpl.write_text('# {{ report.title | md }}\n{% for e in report.nodes %}* {{ e.node | md }}\n{% endfor %}')
    data = _evil_report()
    html = report.render_html(data, str(html_tpl))
    assert html.startswith('<h1>&lt;script&gt;t&lt;/script&gt;')       # autoescaped as the shipped one
    assert '<p>cn-&lt;script&gt;' in html and '<svg ' in html and 'svg .box' in html
    text = report.render_markdown(data, str(md_tpl))
    assert text.splitlines()[1] == '* cn-&lt;script\\>alert("x")&lt;/script\\> & \'q\''
    paths = report.write_report(str(tmp_path / 'out'), data, str(html_tpl), str(md_tpl))
    with open(paths['html']) as handle:
        assert handle.read() == html


def test_template_errors_name_the_template(tmp_path):
    data = _evil_report()
    with pytest.raises(report_render.TemplateError) as info:
        report.render_html(data, str(tmp_path / 'missing.j2'))
    assert 'missing.j2 does not exist' in info.value.detail
    broken = tmp_path / 'broken.md.j2'
    broken.write_text('line one\n{% for x in %}\n')
    with pytest.raises(report_render.TemplateError) as info:
        report.render_markdown(data, str(broken))
    assert 'broken.md.j2 (line 2) cannot be rendered: TemplateSyntaxError' in info.value.detail
    unknown = tmp_path / 'unknown.md.j2'
    unknown.write_text('{{ report.no_such_key }}\n')
    with pytest.raises(report_render.TemplateError) as info:
        report.render_markdown(data, str(unknown))
    assert 'UndefinedError' in info.value.detail and 'no_such_key' in info.value.detail


@pytest.fixture
def run(capsys):
    def run_module(main, args, check=False):
        return run_module_main(main, args, capsys, check=check)
    return run_module


def test_module_renders_with_the_operator_template(run, tmp_path):
    tpl = tmp_path / 'mine.html.j2'
    tpl.write_text('<h1>{{ report.title }}</h1>\n')
    dest = str(tmp_path / 'reports' / 'r1')
    rc, res = run(fleet_report.main, {'dest': dest, 'read_trees': False, 'records': [{'node': 'a&b', 'status': 'noop'}],
                                      'title': 'T<1>', 'html_template': str(tpl)})
    assert rc == 0, res
    with open(res['paths']['html']) as handle:
        assert handle.read() == '<h1>T&lt;1&gt;</h1>\n'
    with open(res['paths']['markdown']) as handle:
        assert handle.read().startswith('# T&lt;1\\>\n')


def test_module_returns_the_data_for_the_action_plugin_then_writes_its_files(run, tmp_path):
    dest = str(tmp_path / 'reports' / 'r1')
    rc, res = run(fleet_report.main, {'dest': dest, 'read_trees': False, 'return_report': True,
                                      'records': [{'node': 'a', 'status': 'noop'}], 'hosts': ['a', 'b']})
    assert rc == 0, res
    assert sorted(os.listdir(dest)) == ['nodes']            # the records only: the caller renders
    assert [e['node'] for e in res['report']['nodes']] == ['a', 'b']
    files = report.report_files(res['report'])
    rc, res = run(fleet_report.main, {'dest': dest, 'files': files})
    assert rc == 0 and res['changed'], res
    assert sorted(os.listdir(dest)) == ['nodes', 'report.html', 'report.md', 'summary.json']
    assert os.readlink(os.path.join(str(tmp_path / 'reports'), 'latest')) == 'r1'
    with open(res['paths']['summary']) as handle:
        assert json.load(handle)['unreached'] == ['b']
    rc, res = run(fleet_report.main, {'dest': dest, 'files': {'other.txt': 'x'}})
    assert rc == 1 and res['msg'].startswith('not a report file: other.txt'), res


def test_fleet_report_unexpected_error_has_no_traceback(run, tmp_path, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError('broken on purpose')
    monkeypatch.setattr(report, 'build_report', broken)
    rc, res = run(fleet_report.main, {'dest': str(tmp_path / 'r'), 'read_trees': False})
    assert rc == 1
    assert res['msg'].startswith('Unexpected error (RuntimeError): broken on purpose (raised at ')
    assert 'exception' not in res and 'Traceback' not in json.dumps(res)


def test_fleet_report_cannot_write(run, tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    rc, res = run(fleet_report.main, {'dest': str(blocker / 'run'), 'read_trees': False})
    assert rc == 1 and res['msg'].startswith('Cannot write the report in %s' % (blocker / 'run')), res
    assert 'exception' not in res


def test_preflight_unexpected_error_has_no_traceback(run, tmp_path, monkeypatch):
    def broken(*_args, **_kwargs):
        raise KeyError('sdk mapping')
    monkeypatch.setattr(factory, 'get_backend', broken)
    rc, res = run(placement_preflight.main, {'embedded_db': str(tmp_path / 'p.db')})
    assert rc == 1
    assert res['msg'].startswith("Unexpected error (KeyError): 'sdk mapping' (raised at ")
    assert 'exception' not in res and 'Traceback' not in json.dumps(res)
