"""Write (or, with --check, compare) roles/<role>/README.md from roles/<role>/meta/argument_specs.yml.

The README of a role is generated from its argument specification, the one source of its options,
so the two cannot drift: `make role-readmes` writes them, and the docs-lint stage of `make test`
runs `--check`, which fails naming every README that differs from what would be generated (and
prints the command that regenerates them). Ansible markup (C(), O(), M(), V(), ...) is parsed with
antsibull-docs-parser, the parser antsibull-docs itself uses (bad markup is an error), and written as Markdown.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

import yaml
from antsibull_docs_parser import dom
from antsibull_docs_parser.parser import Context, parse

ROOT = Path(__file__).resolve().parent.parent
COLLECTION = "placement.upgrade"
HEADER = ("<!-- Generated from meta/argument_specs.yml by .ci/role-readmes.py: do not edit by hand;"
          " `make role-readmes` rewrites it, `make docs-lint` checks it. -->")


def _part(part) -> str:
    kind = part.type
    if kind == dom.PartType.TEXT:
        return part.text.replace("|", "\\|").replace("*", "\\*").replace("<", "&lt;")
    if kind in (dom.PartType.CODE, dom.PartType.OPTION_VALUE, dom.PartType.ENV_VARIABLE):
        return f"`{part.text if kind == dom.PartType.CODE else (part.value if kind == dom.PartType.OPTION_VALUE else part.name)}`"
    if kind in (dom.PartType.OPTION_NAME, dom.PartType.RETURN_VALUE):
        return f"`{part.name}={part.value}`" if part.value is not None else f"`{part.name}`"
    if kind == dom.PartType.MODULE:
        return f"`{part.fqcn}`"
    if kind == dom.PartType.PLUGIN:
        return f"`{part.plugin.fqcn}` ({part.plugin.type})"
    if kind == dom.PartType.ITALIC:
        return f"*{part.text}*"
    if kind == dom.PartType.BOLD:
        return f"**{part.text}**"
    if kind == dom.PartType.URL:
        return f"<{part.url}>"
    if kind == dom.PartType.LINK:
        return f"[{part.text}]({part.url})"
    if kind == dom.PartType.RST_REF:
        return part.text
    if kind == dom.PartType.HORIZONTAL_LINE:
        return " --- "
    raise ValueError(f"unrenderable markup: {part}")


def _md(text, role: str, entry: str) -> str:
    """One description paragraph (Ansible markup) as one line of Markdown; bad markup is an error."""
    context = Context(current_plugin=dom.PluginIdentifier(fqcn=f"{COLLECTION}.{role}", type="role"),
                      role_entrypoint=entry)
    rendered = []
    for paragraph in parse(str(text), context, errors="exception"):
        rendered.append("".join(_part(part) for part in paragraph))
    return " ".join(" ".join(rendered).split())


def _paragraphs(value, role: str, entry: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    return [_md(v, role, entry) for v in value]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _value(value) -> str:
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    return f"`{json.dumps(value)}`"


def _options(options: dict, role: str, entry: str, prefix: str = "") -> list[str]:
    rows = []
    for name in sorted(options):
        spec = options[name] or {}
        kind = spec.get("type", "str")
        if kind == "list" and spec.get("elements"):
            kind = f"list of {spec['elements']}"
        required = "yes" if spec.get("required") else "no"
        default = _value(spec["default"]) if "default" in spec else ""
        description = " ".join(_paragraphs(spec.get("description"), role, entry))
        if spec.get("choices"):
            description += " Choices: " + ", ".join(_value(c) for c in spec["choices"]) + "."
        rows.append(f"| `{prefix}{name}` | {kind} | {required} | {_cell(default)} | {_cell(description.strip())} |")
        if spec.get("options"):
            rows.extend(_options(spec["options"], role, entry, f"{prefix}{name}."))
    return rows


def _playbooks_using(role: str) -> list[str]:
    fqcn = f"{COLLECTION}.{role}"
    found = []
    for path in sorted((ROOT / "playbooks").glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        if any(line.strip() in (f"name: {fqcn}", f"- {fqcn}", f"role: {fqcn}") for line in text.splitlines()):
            found.append(f"playbooks/{path.name}")
    return found


def render(role: str) -> str:
    spec_file = ROOT / "roles" / role / "meta" / "argument_specs.yml"
    specs = yaml.safe_load(spec_file.read_text(encoding="utf-8"))["argument_specs"]
    main = specs.get("main", {})
    out = [f"# {COLLECTION}.{role}", "", HEADER, ""]
    if main.get("short_description"):
        out += [_md(main["short_description"], role, "main"), ""]
    out += ["Entry points: " + ", ".join(f"`{name}`" for name in specs) + ". Use the role by its full name,"
            f" for example `ansible.builtin.include_role: {{name: {COLLECTION}.{role}}}`"
            + (" (`tasks_from: <entry point>` for another entry point than `main`)" if len(specs) > 1 else "")
            + ".", ""]
    playbooks = _playbooks_using(role)
    if playbooks:
        out += ["Playbooks of this collection that run it: " + ", ".join(f"`{p}`" for p in playbooks) + ".", ""]
    for entry, spec in specs.items():
        out += [f"## Entry point `{entry}`", ""]
        if spec.get("short_description") and (entry != "main" or spec is not main):
            out += [_md(spec["short_description"], role, entry), ""]
        for paragraph in _paragraphs(spec.get("description"), role, entry):
            out += [paragraph, ""]
        options = spec.get("options") or {}
        out += [f"### Options of `{entry}`", ""]
        if options:
            out += ["| Option | Type | Required | Default | Description |", "|---|---|---|---|---|"]
            out += _options(options, role, entry)
        else:
            out += ["None."]
        out.append("")
        if spec.get("author"):
            authors = spec["author"] if isinstance(spec["author"], list) else [spec["author"]]
            out += ["Authors: " + ", ".join(authors) + ".", ""]
    out += ["## License", "", "GNU General Public License v3.0 or later (`COPYING` at the collection's root).", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail when a README differs from what would be generated")
    args = parser.parse_args(argv)
    roles = sorted(p.parent.parent.name for p in (ROOT / "roles").glob("*/meta/argument_specs.yml"))
    stale = []
    for role in roles:
        readme = ROOT / "roles" / role / "README.md"
        wanted = render(role)
        current = readme.read_text(encoding="utf-8") if readme.exists() else None
        if current == wanted:
            continue
        if args.check:
            stale.append(role)
            if current is None:
                print(f"role-readmes: roles/{role}/README.md is missing", file=sys.stderr)
            else:
                diff = difflib.unified_diff(current.splitlines(), wanted.splitlines(),
                                            f"roles/{role}/README.md", "generated", lineterm="", n=1)
                print("\n".join(list(diff)[:40]), file=sys.stderr)
        else:
            readme.write_text(wanted, encoding="utf-8")
            print(f"role-readmes: wrote roles/{role}/README.md")
    if stale:
        print(f"role-readmes: {len(stale)} role README(s) differ from meta/argument_specs.yml"
              f" ({', '.join(stale)}); run `make role-readmes` and commit the result", file=sys.stderr)
        return 1
    if args.check:
        print(f"role-readmes: {len(roles)} role README(s) match meta/argument_specs.yml ({', '.join(roles)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
