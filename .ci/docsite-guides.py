"""Write (or, with --check, compare) docs/docsite/rst/<guide>.rst from the guides docs/<guide>.md.

antsibull-docs takes a collection's extra docs only as RST under docs/docsite/rst/, listed in
docs/docsite/extra-docs.yml; the guides are written in Markdown under docs/. This converts each
guide with pandoc (GitHub-flavoured Markdown to RST, pandoc from the pypandoc-binary wheel of the
venv .venv-publish), puts the label antsibull-docs requires on top, and rewrites the links: a link
to another guide becomes a reference to its docsite page (an anchor in it is dropped: the page is
linked), a link to any other file of the repository becomes its address in the repository. The
RST files are generated: `make docsite-guides` writes them, the publish stage checks them
(`--check`), so they cannot drift from the Markdown.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from pathlib import Path

import pypandoc
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RST = DOCS / "docsite" / "rst"
LABEL = "ansible_collections.placement.upgrade.docsite."
REPOSITORY = yaml.safe_load((ROOT / "galaxy.yml").read_text(encoding="utf-8"))["repository"]
HEADER = ".. Generated from docs/{name}.md by .ci/docsite-guides.py: edit the Markdown, then `make docsite-guides`."

LUA = r"""
local guides = {GUIDES}
local label = "LABEL"
local blob = "BLOB"
local function normalize(path)
  local parts = {}
  for part in ("docs/" .. path):gmatch("[^/]+") do
    if part == ".." then table.remove(parts) elseif part ~= "." then table.insert(parts, part) end
  end
  return table.concat(parts, "/")
end
function Link(el)
  local target = el.target
  if target:match("^%a[%w+.-]*:") or target:match("^#") then return nil end
  local file, anchor = target:match("^([^#]*)(#?.*)$")
  local path = normalize(file)
  local name = path:match("^docs/([%w_-]+)%.md$")
  if name and guides[name] then
    local text = pandoc.utils.stringify(el.content):gsub("[`<>]", "")
    return pandoc.RawInline("rst", ":ref:`" .. text .. " <" .. label .. name .. ">`")
  end
  el.target = blob .. path .. anchor
  return el
end
"""


def guides() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("*.md"))


def render(name: str, lua: Path) -> str:
    body = pypandoc.convert_file(str(DOCS / f"{name}.md"), "rst", format="gfm-gfm_auto_identifiers",
                                 extra_args=["--wrap=none", f"--lua-filter={lua}"])
    return "\n".join([HEADER.format(name=name), "", f".. _{LABEL}{name}:", "", body.strip(), ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail when an RST file differs from what would be generated")
    args = parser.parse_args(argv)
    names = guides()
    table = "{" + ", ".join(f'["{n}"] = true' for n in names) + "}"
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        lua = Path(tmp) / "links.lua"
        lua.write_text(LUA.replace("{GUIDES}", table).replace("LABEL", LABEL)
                       .replace("BLOB", REPOSITORY.rstrip("/") + "/blob/main/"), encoding="utf-8")
        wanted = {f"{n}.rst": render(n, lua) for n in names}
    existing = {p.name: p for p in RST.glob("*.rst")} if RST.is_dir() else {}
    for extra in sorted(set(existing) - set(wanted)):
        stale.append(extra)
        if args.check:
            print(f"docsite-guides: docs/docsite/rst/{extra} has no guide docs/{extra[:-4]}.md", file=sys.stderr)
        else:
            existing[extra].unlink()
            print(f"docsite-guides: removed docs/docsite/rst/{extra} (its guide is gone)")
    for file_name, text in wanted.items():
        path = RST / file_name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(file_name)
        if args.check:
            if current is None:
                print(f"docsite-guides: docs/docsite/rst/{file_name} is missing", file=sys.stderr)
            else:
                diff = difflib.unified_diff(current.splitlines(), text.splitlines(),
                                            f"docs/docsite/rst/{file_name}", "generated", lineterm="", n=1)
                print("\n".join(list(diff)[:30]), file=sys.stderr)
        else:
            RST.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"docsite-guides: wrote docs/docsite/rst/{file_name}")
    listed = set()
    index = DOCS / "docsite" / "extra-docs.yml"
    if index.exists():
        for section in yaml.safe_load(index.read_text(encoding="utf-8")).get("sections") or []:
            listed.update(entry if isinstance(entry, str) else entry["ref"] for entry in section["toctree"])
    unlisted = sorted(set(names) - listed)
    if unlisted:
        print(f"docsite-guides: guide(s) not in docs/docsite/extra-docs.yml: {', '.join(unlisted)}", file=sys.stderr)
        return 1
    if args.check and stale:
        print(f"docsite-guides: {len(stale)} file(s) of docs/docsite/rst/ differ from the guides in docs/;"
              " run `make docsite-guides` and commit the result", file=sys.stderr)
        return 1
    if args.check:
        print(f"docsite-guides: {len(names)} guide(s) of docs/ match docs/docsite/rst/ and extra-docs.yml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
