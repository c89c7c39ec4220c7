"""One name for one thing: no class or type name is defined twice in the product code, and no
word of the house's own making is left where a plain one exists (docs/architecture.md)."""
from __future__ import annotations

import ast
import pathlib
import re
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("guard", "shapes", "store", "rules", "ingest", "dnscheck", "sources", "snapshotter",
            "intake", "notify", "demo", "jobs", "webapp", "cli", "deploy")
MODULES = ("config.py", "logs.py", "wsgi.py")
# Words a reader would have to learn first; each has a plain one (a slice, a fingerprint, ...).
PRIVATE_WORDS = re.compile(r"\b(lanes?|gatekeep\w*|stamps?|stamped|stamping|memos?|ledgers?)\b",
                           re.IGNORECASE)
TEXT_SUFFIXES = {".py", ".html", ".css", ".js", ".json", ".txt", ".conf", ".example", ".service"}


def product_files() -> list[pathlib.Path]:
    files = [ROOT / name for name in MODULES]
    for package in PACKAGES:
        files += sorted((ROOT / package).rglob("*.py"))
    return files


def defined_names(path: pathlib.Path) -> list[str]:
    """The classes and CamelCase type aliases a module defines at its top level."""
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id[0].isupper() and not target.id.isupper():
                names.append(target.id)
    return names


def test_no_class_or_type_name_is_defined_twice_in_the_product():
    where = defaultdict(list)
    for path in product_files():
        for name in defined_names(path):
            where[name].append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}


def test_no_private_word_is_left_in_the_product_or_its_docs():
    texts = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md"))]
    for package in PACKAGES:
        texts += [path for path in sorted((ROOT / package).rglob("*"))
                  if path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts]
    found = []
    for path in [*texts, *(ROOT / name for name in MODULES)]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if PRIVATE_WORDS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
