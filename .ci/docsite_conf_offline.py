# Appended to the docsite's conf.py by .ci/docsite.sh. The build is offline, so no intersphinx
# inventory can be fetched: the references antsibull-docs writes into Ansible's own documentation
# (ansible.builtin's plugins, common return values, plugin types, configuration settings and
# their environment variables) become plain links to docs.ansible.com, as intersphinx would make
# them. Any other unresolved reference stays a warning, which fails the build (-W).
import re as _re

from docutils import nodes as _nodes

intersphinx_mapping = {}
# The theme's logo links the documentation home, "/" by default: a page opened from the disk (or
# served below a web server's root) would link nothing. The collection's home is its repository.
html_theme_options = dict(globals().get("html_theme_options") or {},
                          documentation_home_url="https://github.com/placement-upgrade/placement.upgrade")
# a guide's code block without a language (program output, text) is not lexed as YAML
highlight_language = "none"
_ANSIBLE_DOCS = "https://docs.ansible.com/ansible/latest/"
_LABELS = {
    "common_return_values": "reference_appendices/common_return_values.html",
    "action_plugins": "plugins/action.html",
    "callback_plugins": "plugins/callback.html",
    "inventory_plugins": "plugins/inventory.html",
    "lookup_plugins": "plugins/lookup.html",
    "ansible_configuration_settings": "reference_appendices/config.html",
}
_BUILTIN = _re.compile(r"^ansible_collections\.ansible\.builtin\.([a-z0-9_]+)_([a-z]+)(?:__(.+))?$")


def _external(app, env, node, contnode):
    target = node.get("reftarget", "")
    kind = node.get("reftype")
    url = None
    if kind == "envvar" and target.startswith("ANSIBLE_"):
        url = f"{_ANSIBLE_DOCS}reference_appendices/config.html#envvar-{target}"
    elif kind == "ref" and target in _LABELS:
        url = _ANSIBLE_DOCS + _LABELS[target]
    elif kind == "ref":
        match = _BUILTIN.match(target)
        if match:
            name, plugin_type, anchor = match.groups()
            url = f"{_ANSIBLE_DOCS}collections/ansible/builtin/{name}_{plugin_type}.html"
            if anchor:
                url += "#" + anchor
    if url is None:
        return None
    reference = _nodes.reference("", "", internal=False, refuri=url)
    reference += contnode
    return reference


def setup(app):
    app.connect("missing-reference", _external)
