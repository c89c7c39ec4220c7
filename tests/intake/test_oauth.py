"""Token keeping: renewal times, the in-memory token, and why a provider could not be reached."""
import socket

import pytest
import requests
import trustme

from intake import oauth
from tests.intake import token_server


@pytest.mark.parametrize("lifetime, renewed_after", [(3600, 3300), (600, 450), (8, 6), (0, 0)])
def test_a_token_is_renewed_five_minutes_before_it_expires_or_at_three_quarters(
        lifetime, renewed_after):
    assert oauth.renewal_delay(lifetime) == renewed_after


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_token_is_kept_until_it_is_due_then_fetched_again():
    clock, fetched = Clock(), []

    def fetch():
        fetched.append(clock.now)
        return f"token-{len(fetched)}", 3600
    tokens = oauth.Tokens(fetch, clock=clock)
    assert tokens.renew_in() == 0
    assert tokens.current() == "token-1"
    clock.now += 3299
    assert tokens.current() == "token-1" and tokens.renew_in() == 1
    clock.now += 1
    assert tokens.renew_in() == 0
    assert tokens.current() == "token-2"
    assert fetched == [1000.0, 4300.0]


def test_a_failed_renewal_keeps_nothing_and_is_tried_again():
    answers = iter([oauth.TokenError("refused"), ("token-1", 3600)])

    def fetch():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer
    tokens = oauth.Tokens(fetch, clock=Clock())
    with pytest.raises(oauth.TokenError):
        tokens.current()
    assert tokens.current() == "token-1"


def test_network_reason_finds_the_root_of_a_requests_failure():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]        # bound, not listening: connections are refused
        with pytest.raises(requests.RequestException) as refused:
            requests.get(f"http://127.0.0.1:{port}/", timeout=5)
    assert oauth.network_reason(refused.value) == "Connection refused"


def test_network_reason_names_an_untrusted_certificate():
    ca = trustme.CA()
    server, httpd = token_server.start(ca)
    try:
        with pytest.raises(requests.RequestException) as untrusted:
            requests.get(server.base + "/", timeout=5, verify=True)
    finally:
        token_server.stop(server, httpd)
    assert oauth.network_reason(untrusted.value).startswith("certificate not trusted (")
