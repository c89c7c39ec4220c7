"""The README's curl lines, run with curl against gunicorn on the demo store: each answers 200
with the top-level fields the document's example of that operation has, so they cannot rot."""
from __future__ import annotations

import json
import pathlib
import re
import shlex
import shutil
import subprocess
from urllib.parse import urlsplit

import pytest

from tests.demo_api import demo_keys, served_demo
from tests.test_contract import DOC

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
ORIGINS = ("http://127.0.0.1:8000", "https://reports.example.net")
KEY = re.compile(r"\$KEY|rua_[0-9A-Z]+…?")
CURL = shutil.which("curl")


def readme_curl_lines() -> list[str]:
    return [line.strip() for line in README.read_text(encoding="utf-8").splitlines()
            if line.strip().startswith("curl ")]


def expected_fields(url: str) -> set[str]:
    """Top-level fields of the documented example of the operation url names."""
    path = urlsplit(url).path
    if path == "/.well-known/api-catalog":
        return {"linkset"}
    path = path.removeprefix("/api/v1")
    for pattern, item in DOC["paths"].items():
        if re.fullmatch(re.sub(r"{\w+}", r"[^/]+", pattern), path):
            return set(item["get"]["responses"]["200"]["content"]["application/json"]["example"])
    raise AssertionError(f"{url}: no documented operation")


def test_the_readme_has_curl_lines_for_this_test():
    assert len(readme_curl_lines()) >= 5


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
@pytest.mark.slow
def test_every_readme_curl_line_answers_as_documented(rua, config, tmp_path):
    key = demo_keys(rua)[0]
    with served_demo(config, tmp_path) as base:
        origin = base.removesuffix("/api/v1")
        for number, line in enumerate(readme_curl_lines()):
            args = shlex.split(KEY.sub(key, line))
            url = next(arg for arg in args if arg.startswith(ORIGINS))
            here = origin + url[len(next(o for o in ORIGINS if url.startswith(o))):]
            args = [here if arg == url else arg for arg in args[1:]]
            folder = tmp_path / f"curl-{number}"
            folder.mkdir()
            saves = any(arg.startswith("-") and "O" in arg for arg in args)
            extra = [] if saves else ["-o", "answer"]
            run = subprocess.run([CURL, "-sS", "-w", "%{http_code}", *extra, *args], cwd=folder,
                                 capture_output=True, text=True, timeout=60)
            assert run.returncode == 0 and run.stdout == "200", (line, run.stdout, run.stderr)
            files = list(folder.iterdir())
            assert len(files) == 1, line
            if saves:       # -OJ: the attachment under the name the server gave it
                assert files[0].name.endswith(".csv") and files[0].read_text().count("\n") >= 1
                continue
            assert set(json.loads(files[0].read_text())) == expected_fields(url), line
