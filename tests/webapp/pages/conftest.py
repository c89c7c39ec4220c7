"""Pages fixtures: a monitored domain with a report and its snapshots, and a signed-in client."""
from __future__ import annotations

import re
from html import unescape as html_unescape

import pytest

from tests.webapp.test_health import monitored  # noqa: F401 - a fixture of the pages' tests

NUMBER = re.compile(r'<data value="([^"]*)" data-api="([^"]*)"(?: data-from="([^"]*)")?>')


def sign_in(client, key: str, next_path: str = "/"):
    """Sign in through the form as a browser would: GET the form, POST the key with its token."""
    client.get("/sign-in")
    token = client.get_cookie("rua_form").value
    return client.post("/sign-in", data={"key": key, "next": next_path, "form_token": token})


@pytest.fixture
def signed_in(client, key):
    assert sign_in(client, key).status_code == 303
    return client


def api_numbers(html: str) -> list[tuple[str, str, str]]:
    """(JSON path, value, the API path of its answer or "" for the page's own) of every number
    the page shows from an API answer."""
    return [(path, value, answer) for value, path, answer in NUMBER.findall(html)]


def at(body, path: str):
    for part in path.split("."):
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


def assert_same_numbers(html: str, body: dict, at_least: int = 1, ask=None) -> None:
    """Every number the page shows equals the API's answer at its path (body, or ask(path) for
    a number from another answer)."""
    shown = api_numbers(html)
    assert len(shown) >= at_least, html
    for path, value, answer in shown:
        expected = at(ask(html_unescape(answer)) if answer else body, path)
        assert (value == "" if expected is None else float(value) == expected), (path, value)
