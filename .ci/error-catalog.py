"""Write (or, with --check, compare) the error codes table of docs/operator-guide.md from the catalog.

The table sits between the two marker lines below in the guide's "Error codes" section; its rows
are ``errors.CATALOG`` (plugins/module_utils/_placement/errors.py: code, HTTP status, the error
types that carry it, meaning), in the catalog's order. `make error-catalog` writes it; the
docs-lint stage runs `--check`, and tests/unit/.../_placement/test_error_catalog.py compares the
two as well, so the table cannot drift from the code.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ERRORS = ROOT / "plugins" / "module_utils" / "_placement" / "errors.py"
GUIDE = ROOT / "docs" / "operator-guide.md"
BEGIN = "<!-- error-catalog: generated from plugins/module_utils/_placement/errors.py by .ci/error-catalog.py; do not edit -->"
END = "<!-- /error-catalog -->"


def catalog():
    """errors.CATALOG, read from the file (errors.py imports only the standard library)."""
    spec = importlib.util.spec_from_file_location("_placement_errors", ERRORS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CATALOG


def _cell(text):
    return str(text).replace("|", "\\|")


def table(entries):
    """The Markdown table of ``entries`` (ErrorCode tuples), one line a code."""
    lines = ["| code | HTTP status | raised as | meaning |", "|---|---|---|---|"]
    for entry in entries:
        lines.append("| `%s` | %s | %s | %s |" % (entry.code, _cell(entry.status), _cell(entry.raised_as), _cell(entry.meaning)))
    return "\n".join(lines) + "\n"


def render(text, entries):
    """``text`` (the guide) with the block between the markers replaced by the table."""
    try:
        head, rest = text.split(BEGIN + "\n", 1)
        _old, tail = rest.split(END + "\n", 1)
    except ValueError:
        raise SystemExit("%s: the markers of the error table are missing (%s ... %s)" % (GUIDE, BEGIN, END))
    return head + BEGIN + "\n" + table(entries) + END + "\n" + tail


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the guide's table differs from the catalog")
    args = parser.parse_args(argv)
    text = GUIDE.read_text(encoding="utf-8")
    want = render(text, catalog())
    if args.check:
        if want != text:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), want.splitlines(True),
                                                       str(GUIDE), "from errors.CATALOG"))
            print("error-catalog: the table in %s differs from errors.CATALOG: run 'make error-catalog'"
                  % GUIDE.relative_to(ROOT), file=sys.stderr)
            return 1
        print("error-catalog: %s matches errors.CATALOG (%d codes)" % (GUIDE.relative_to(ROOT), len(catalog())))
        return 0
    if want != text:
        GUIDE.write_text(want, encoding="utf-8")
        print("error-catalog: wrote %s" % GUIDE.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
