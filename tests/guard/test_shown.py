"""URLs as rua prints them: the password masked whatever it holds, query values on request;
another party's words bounded, with every secret rua sent it masked in whatever form."""
from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import pytest

from guard.shown import MASK, SHOWN_CHARS, masked, scrubbed


@pytest.mark.parametrize("url, shown", [
    ("smtp://alerts:Sup3r/S3cret-pw@mail.example.net",
     "smtp://alerts:***@mail.example.net"),
    ("smtps://alerts:p@ss#w?rd/x@mail.example.net:465?from=rua@example.net",
     "smtps://alerts:***@mail.example.net:465?from=rua@example.net"),
    ("postgresql://rua:a/b:c@db.internal:5432/rua", "postgresql://rua:***@db.internal:5432/rua"),
    ("postgresql://rua:s3cret@[2001:db8::5]:5432/rua", "postgresql://rua:***@[2001:db8::5]:5432/rua"),
    ("postgresql://rua:%2Fenc%40ded@db/rua", "postgresql://rua:***@db/rua"),
    ("postgresql://rua:@db/rua", "postgresql://rua:***@db/rua"),
    ("postgresql://db.internal:5432/rua", "postgresql://db.internal:5432/rua"),
    ("sqlite:///var/rua.db", "sqlite:///var/rua.db"),
    ("imaps://dmarc@mail.example.net/INBOX", "imaps://dmarc@mail.example.net/INBOX"),
])
def test_a_password_is_masked_whatever_characters_it_holds(url, shown):
    assert masked(url) == shown


def test_query_values_are_masked_on_request():
    url = "https://hooks.example.com/in?token=abc123&team=ops#top"
    assert masked(url) == url
    assert masked(url, query=True) == "https://hooks.example.com/in?token=***&team=***#top"
    assert masked("https://hooks.example.com/in", query=True) == "https://hooks.example.com/in"


SECRET = "app-s3cret/val+ue"


PLAIN = b"\0alerts\0" + SECRET.encode()                      # SMTP AUTH PLAIN
XOAUTH2 = b"user=dmarc\x01auth=Bearer " + SECRET.encode() + b"\x01\x01"    # IMAP XOAUTH2


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize("echo", [
    f"you sent client_secret={SECRET}",
    f"you sent client_secret={quote(SECRET, safe='')}&scope=x",
    f"you sent client_secret={quote_plus(SECRET)}",
    f'you sent {json.dumps({"client_secret": SECRET})}',
    f"you sent {SECRET.encode()!r}",
    f"Authorization: Basic {b64(b'client-id:' + quote(SECRET, safe='').encode())}",
    "AUTH PLAIN " + b64(PLAIN),
    "x" + base64.urlsafe_b64encode(XOAUTH2).decode(),
])
def test_a_secret_echoed_in_any_form_rua_sent_it_is_masked(echo):
    shown = scrubbed(echo, [SECRET, ""])
    assert MASK in shown
    for part in ("s3cret", "S3cret", quote(SECRET, safe=""), "czNjcmV0"):
        assert part not in shown


def test_the_rest_of_the_text_stays_readable_on_one_line():
    said = f"535 5.7.8 Authentication\r\n failed for alerts ({SECRET})"
    assert scrubbed(said, [SECRET]) == "535 5.7.8 Authentication failed for alerts (***)"
    assert scrubbed("Basic dXNlcjpwYXNz and eA==", [SECRET]) == "Basic dXNlcjpwYXNz and eA=="


def test_a_long_answer_is_bounded_after_the_secret_is_masked():
    said = "x" * 290 + SECRET + "y" * 400
    shown = scrubbed(said, [SECRET])
    assert len(shown) == SHOWN_CHARS and shown.endswith("…") and "s3cret" not in shown
    assert "app-s3" not in scrubbed(said, [SECRET], limit=295)
