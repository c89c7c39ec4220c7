"""SASL XOAUTH2 and OAUTHBEARER with plain values: the choice, the messages, the error turn."""
import base64
import json

import pytest

from intake import sasl


@pytest.mark.parametrize("capabilities, expected", [
    ((b"IMAP4rev1", b"AUTH=XOAUTH2", b"AUTH=OAUTHBEARER"), "XOAUTH2"),
    ((b"IMAP4rev1", b"AUTH=oauthbearer"), "OAUTHBEARER"),
    (("IMAP4rev1", "AUTH=PLAIN", "AUTH=XOAUTH2"), "XOAUTH2"),
    ((b"IMAP4rev1", b"AUTH=PLAIN"), None),
])
def test_xoauth2_is_chosen_first_and_oauthbearer_where_it_is_all_there_is(capabilities,
                                                                          expected):
    assert sasl.choose(capabilities) == expected


def test_the_initial_responses_carry_the_user_and_the_bearer_token():
    assert sasl.initial_response("XOAUTH2", "dmarc@example.com", "tok") == (
        b"user=dmarc@example.com\x01auth=Bearer tok\x01\x01")
    # RFC 7628: the GS2 header escapes = and , in the authorization identity.
    assert sasl.initial_response("OAUTHBEARER", "a=b,c@example.com", "tok") == (
        b"n,a=a=3Db=2Cc@example.com,\x01auth=Bearer tok\x01\x01")


@pytest.mark.parametrize("mechanism, reply", [("XOAUTH2", b""), ("OAUTHBEARER", b"\x01")])
def test_an_error_challenge_is_kept_and_answered_as_the_mechanism_requires(mechanism, reply):
    exchange = sasl.Exchange(mechanism, "dmarc", "tok")
    assert exchange(b"").endswith(b"auth=Bearer tok\x01\x01")
    challenge = json.dumps({"status": "401", "schemes": "bearer",
                            "scope": "https://mail.google.com/"}).encode()
    assert exchange(challenge) == reply
    assert exchange.error == "status 401, scope https://mail.google.com/"


@pytest.mark.parametrize("challenge, expected", [
    (b'{"status":"invalid_token"}', "status invalid_token"),
    (b"not json at all\r\n", "not json at all"),
    (base64.b64encode(b"x"), "eA=="),
    (b"[1, 2]", "[1, 2]"),
])
def test_a_server_error_is_a_few_words(challenge, expected):
    assert sasl.server_error(challenge) == expected
