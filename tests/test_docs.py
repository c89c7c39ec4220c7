"""The README and the docs describe this repository: its folders, and files that exist in it."""
from __future__ import annotations

import fnmatch
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def ignored(relative: str) -> bool:
    """Whether a path falls under a pattern of .gitignore (made at run time, never committed)."""
    patterns = [line.strip().rstrip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    parts = relative.rstrip("/").split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern) or fnmatch.fnmatch(part, pattern)
               for pattern in patterns for prefix, part in zip(prefixes, parts))


def top_level() -> set[str]:
    """What a checkout holds at its top: folders (as "name/") and Python modules."""
    return {f"{p.name}/" if p.is_dir() else p.name for p in ROOT.iterdir()
            if not p.name.startswith(".") and not ignored(p.name)
            and (p.is_dir() or p.suffix == ".py")}


def package_map() -> set[str]:
    """The paths the README's package map lists in its first column."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Where things are\n", 1)[1].split("\n## ", 1)[0]
    return {path for line in section.splitlines() if line.startswith("| `")
            for path in re.findall(r"`([^`]+)`", line.split("|")[1])}


def test_the_package_map_lists_every_folder_and_module_at_the_top():
    listed = package_map()
    assert top_level() - listed == set()
    assert {path for path in listed if not (ROOT / path).exists()} == set()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_doc_names_in_the_repository_exists(doc):
    text = doc.read_text(encoding="utf-8")
    tops = {p.name for p in ROOT.iterdir()}
    named = {token for token in re.findall(r"`([^`\s]+)`", text)
             if "/" in token and token.split("/")[0] in tops}
    assert {path for path in named if not (ROOT / path).exists() and not ignored(path)} == set()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_points_outside_the_repository(doc):
    text = doc.read_text(encoding="utf-8")
    assert not re.findall(r"\.\./|/work/|shared/(?:spec|corpus)|decisions\.md|api-v1\.md", text)


def test_no_page_or_help_sends_the_reader_to_a_readme_table_or_list_it_lacks():
    """The settings' table is docs/configuration.md; the roles are spelled out where named."""
    from click.testing import CliRunner

    from cli import main
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"README's (table|list)", text), page
    help_text = CliRunner().invoke(main, ["member", "add", "--help"]).stdout
    assert "see README" not in help_text and "analyst" in help_text


def test_the_operations_guide_lists_the_job_tables_jobs():
    from jobs.table import JOBS
    text = (ROOT / "docs" / "operations.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| ([^|]+) \|$", text, re.MULTILINE)
    assert rows == [(job.name, job.when, job.what) for job in JOBS]


def test_the_alerts_guide_lists_every_event_type_as_defined():
    from store.event_types import EVENT_TYPES
    text = (ROOT / "docs" / "alerts.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| (\w+) \| (yes|no) \| ([^|]+) \|$", text,
                      re.MULTILINE)
    assert rows == [(t.code, t.label, t.severity, "yes" if t.deliverable else "no", t.clears)
                    for t in EVENT_TYPES]
