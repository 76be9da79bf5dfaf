# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install .ci/get_pip_offline.py where ansible-test looks for its cached get-pip.

Usage: python .ci/install_get_pip.py   (run with the project venv's python)

ansible-test (``--venv`` and every other mode) downloads a get-pip script from a
host that offline machines cannot reach, unless ``~/.ansible/test/cache/
get_pip_<pip version>.py`` exists.  This installs the offline stand-in there,
for the pip version the installed ansible-test asks for, with the package-index
settings pip sees right now (pip.conf files and PIP_* variables, as ``pip config
list`` reports them) baked in: ansible-test strips PIP_* variables, so without
this a machine whose index settings live only in its environment would fail.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "get_pip_offline.py")
CACHE_DIR = os.path.expanduser("~/.ansible/test/cache")
DEFAULT_PIP_VERSION = "24.2"

# pip options that decide where packages come from and how they are fetched.
INDEX_KEYS = (
    "index-url", "extra-index-url", "find-links", "no-index", "cert", "client-cert",
    "trusted-host", "proxy", "timeout", "default-timeout", "retries",
)


def ansible_test_pip_versions():
    """The pip version(s) the installed ansible-test bootstraps (from its source)."""
    try:
        import ansible_test
    except ImportError:
        return [DEFAULT_PIP_VERSION]
    source = os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")
    try:
        with open(source) as handle:
            text = handle.read()
    except (IOError, OSError):
        return [DEFAULT_PIP_VERSION]
    found = sorted(set(re.findall(r"pip\s*=\s*['\"]([0-9][0-9.]*)['\"]", text)))
    return found or [DEFAULT_PIP_VERSION]


def current_pip_settings():
    """{option: value} for INDEX_KEYS, merged as pip merges them (env wins)."""
    try:
        out = subprocess.check_output(
            [sys.executable, "-m", "pip", "config", "list"], stderr=subprocess.DEVNULL
        ).decode("utf-8", "replace")
    except (OSError, subprocess.CalledProcessError):
        return {}
    files, env = {}, {}
    for line in out.splitlines():
        if "=" not in line:
            continue
        name, raw = line.split("=", 1)
        section, key = name.rpartition(".")[::2]
        if key not in INDEX_KEYS or section not in ("global", "install", ":env:"):
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw.strip("'\"")
        (env if section == ":env:" else files)[key] = str(value)
    files.update(env)
    return files


def render(settings):
    with open(TEMPLATE) as handle:
        text = handle.read()
    marker = "PIP_SETTINGS = {}\n"
    if marker not in text:
        raise SystemExit("install_get_pip: marker %r missing from %s" % (marker, TEMPLATE))
    return text.replace(marker, "PIP_SETTINGS = %r\n" % (settings,), 1)


def install(path, content):
    if os.path.exists(path):
        with open(path) as handle:
            if handle.read() == content:
                return False
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".get_pip.")
    with os.fdopen(fd, "w") as handle:
        handle.write(content)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)
    return True


def main():
    if not os.path.isdir(CACHE_DIR):
        os.makedirs(CACHE_DIR)
    settings = current_pip_settings()
    content = render(settings)
    for version in ansible_test_pip_versions():
        path = os.path.join(CACHE_DIR, "get_pip_%s.py" % version.replace(".", "_"))
        changed = install(path, content)
        print("offline get-pip for pip %s: %s (%s; pip settings: %s)" % (
            version, path, "installed" if changed else "up to date",
            ", ".join(sorted(settings)) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
