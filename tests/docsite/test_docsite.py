"""The docsite (`make docsite`, build/docsite/html) opened as a reader would, in headless Chromium.

Three pages, a module, a role and a guide: each must render with its title, the module's and the
role's options table, and no link inside the site that leads nowhere (a missing page, or an anchor
the page does not have). The DOM Chromium rendered is what is checked, and a screenshot of each
page is saved under tests/output/docsite/. Run by `make docsite-test` (the publish stage of
`make test`) after `make docsite`; not a unit test (pytest.ini's testpaths leave it out).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "docsite" / "html"
SHOTS = ROOT / "tests" / "output" / "docsite"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# as root, on a machine whose network is closed: no sandbox, no background connections
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--allow-file-access-from-files"]

PAGES = {
    # page: (words the title must start with, options-table header cells, or None for a guide)
    "reshape_module.html": ("placement.upgrade.reshape module", ("Parameter", "Comments")),
    "rolling_reshape_role.html": ("placement.upgrade.rolling_reshape role", ("Parameter", "Comments")),
    "docsite/operator-guide.html": ("Operator guide: rolling a Placement reshape through the fleet", None),
}


class _Page(HTMLParser):
    """What the checks need of a rendered page: title, h1, table headers, links and ids."""

    def __init__(self):
        super().__init__()
        self.title = ""
        self.h1 = ""
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tables: list[list[str]] = []
        self._in = []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href") is not None:
            self.links.append(attrs["href"])
        if tag == "table":
            self.tables.append([])
        if tag == "th" and self.tables:
            self._cell = ""
        self._in.append(tag)

    def handle_endtag(self, tag):
        if tag == "th" and self._cell is not None and self.tables:
            self.tables[-1].append(" ".join(self._cell.split()))
            self._cell = None
        while self._in:
            if self._in.pop() == tag:
                break

    def handle_data(self, data):
        if "title" in self._in:
            self.title += data
        if "h1" in self._in:
            self.h1 += data
        if self._cell is not None:
            self._cell += data


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _chromium(*args: str) -> subprocess.CompletedProcess:
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: `make deps` installs chromium (bindep.txt)"
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def site() -> Path:
    assert (SITE / "index.html").is_file(), f"no docsite in {SITE}: run `make docsite` first"
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SITE


def _internal_target(page: Path, href: str) -> tuple[Path, str] | None:
    """The file and anchor an internal link points to; None for a link out of the site."""
    parts = urlsplit(href)
    if parts.scheme in ("http", "https", "mailto", "javascript", "data"):
        return None
    if parts.scheme == "file":
        path = Path(unquote(parts.path))
    elif parts.path:
        path = (page.parent / unquote(parts.path)).resolve()
    else:
        path = page
    return path, unquote(parts.fragment)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_renders_in_chromium(site: Path, name: str):
    page_file = site / name
    assert page_file.is_file(), f"{name} was not built"
    url = page_file.as_uri()
    dumped = _chromium("--dump-dom", url)
    assert dumped.returncode == 0, f"chromium --dump-dom {name}: exit {dumped.returncode}: {dumped.stderr[-800:]}"
    page = _parse(dumped.stdout)

    title, header = PAGES[name]
    assert page.title.strip().startswith(title), f"{name}: title {page.title!r}"
    assert title in " ".join(page.h1.split()) or title.split(" module")[0].split(" role")[0] in page.h1, \
        f"{name}: heading {page.h1!r}"
    if header is not None:
        assert any(list(header) == table[:len(header)] for table in page.tables), \
            f"{name}: no options table with the header {header}; table headers: {page.tables}"
        assert len(page.links) > 20, f"{name}: only {len(page.links)} links: the page did not render whole"

    broken = []
    internal = 0
    ids_of: dict[Path, set[str]] = {page_file.resolve(): page.ids}
    for href in page.links:
        target = _internal_target(page_file, href)
        if target is None:
            continue
        internal += 1
        path, anchor = target
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file() or site.resolve() not in path.resolve().parents:
            broken.append(f"{href} (no such page in the site)")
            continue
        if anchor:
            if path.resolve() not in ids_of:
                ids_of[path.resolve()] = _parse(path.read_text(encoding="utf-8")).ids
            if anchor not in ids_of[path.resolve()]:
                broken.append(f"{href} (no #{anchor} in {path.relative_to(site)})")
    assert internal > 0, f"{name}: no internal link at all (navigation missing?)"
    assert not broken, f"{name}: {len(broken)} broken internal link(s): {broken[:10]}"

    shot = SHOTS / (name.replace("/", "_").removesuffix(".html") + ".png")
    if shot.exists():
        shot.unlink()
    taken = _chromium(f"--screenshot={shot}", "--window-size=1280,1600", url)
    assert taken.returncode == 0 and shot.is_file() and shot.stat().st_size > 10_000, \
        f"{name}: no screenshot ({taken.returncode}): {taken.stderr[-800:]}"


def test_guides_link_each_other_through_the_site(site: Path):
    """A guide's link to another guide is a link to that guide's page of the site, not to a .md file."""
    page = _parse((site / "docsite" / "operator-guide.html").read_text(encoding="utf-8"))
    to_guides = [href for href in page.links if href.split("#")[0].endswith(("reshape.html", "awx.html"))]
    assert to_guides, "the operator guide links neither reshape.md nor awx.md through the site"
    assert not [href for href in page.links if href.split("#")[0].endswith(".md")
                and not href.startswith("http")], "a guide links a .md file inside the site"
