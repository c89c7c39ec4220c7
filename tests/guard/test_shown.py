"""URLs as rua prints them: the password masked whatever it holds, query values on request."""
from __future__ import annotations

import pytest

from guard.shown import masked


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
