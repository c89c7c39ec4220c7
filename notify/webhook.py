"""Webhooks per Standard Webhooks: signed with the `standardwebhooks` package, sent by http.client.

The package signs (and the tests' receiver verifies with it) but sends nothing and makes no
secrets, so the secret is made here (whsec_ + base64 of 32 random bytes, the form its Webhook
class reads) and the POST goes through the standard library, to the address the URL rule
checked (notify/targets.py). A 2xx answer is a delivery; anything else, a redirect included,
is a failed attempt.
"""
from __future__ import annotations

import base64
import http.client
import secrets
import socket
import ssl
from datetime import datetime

from standardwebhooks.webhooks import Webhook

from notify import DeliveryError, targets
from store.clock import to_epoch

TIMEOUT_SECONDS = 10
USER_AGENT = "rua-webhooks/1"


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def signed_headers(secret: str, webhook_id: str, body: str, now: datetime) -> dict[str, str]:
    """The three Standard Webhooks headers for `body`; the timestamp is this attempt's."""
    signature = Webhook(secret).sign(msg_id=webhook_id, timestamp=now, data=body)
    return {"webhook-id": webhook_id, "webhook-timestamp": str(to_epoch(now)),
            "webhook-signature": signature}


def send(url: str, secret: str, webhook_id: str, body: str, now: datetime, config) -> None:
    """POST the signed body once; DeliveryError unless the receiver answers 2xx."""
    try:
        target = targets.check(url, config)
    except targets.RefusedUrl as exc:
        raise DeliveryError(f"URL refused: {exc}") from None
    headers = {"content-type": "application/json", "user-agent": USER_AGENT,
               **signed_headers(secret, webhook_id, body, now)}
    connection = _connection(target)
    try:
        connection.request("POST", target.path, body=body.encode(), headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)
    except (OSError, http.client.HTTPException) as exc:
        raise DeliveryError(f"{type(exc).__name__}: {exc}") from None
    finally:
        connection.close()
    if not 200 <= response.status < 300:
        raise DeliveryError(f"receiver answered HTTP {response.status} {response.reason}")


def _connection(target: targets.Target) -> http.client.HTTPConnection:
    if target.scheme == "https":
        connection = http.client.HTTPSConnection(target.host, target.port,
                                                 timeout=TIMEOUT_SECONDS,
                                                 context=ssl.create_default_context())
    else:
        connection = http.client.HTTPConnection(target.host, target.port,
                                                timeout=TIMEOUT_SECONDS)
    # Connect to the checked address; TLS still verifies the certificate against the host name.
    connection._create_connection = (
        lambda _address, timeout, source=None:
        socket.create_connection((target.address, target.port), timeout, source))
    return connection
