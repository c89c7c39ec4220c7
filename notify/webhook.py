"""Webhooks per Standard Webhooks: signed with the `standardwebhooks` package, sent by http.client.

The package signs (and the tests' receiver verifies with it) but sends nothing and makes no
secrets, so the secret is made here (whsec_ + base64 of 32 random bytes, the form its Webhook
class reads) and the POST goes through guard/connect.py, to an address the URL rule checked
(notify/targets.py), within one total deadline. A 2xx answer is a delivery; anything else, a
redirect included, is a failed attempt.
"""
from __future__ import annotations

import base64
import http.client
import logging
import secrets
import ssl
from datetime import datetime

from standardwebhooks.webhooks import Webhook

from guard.connect import Deadline, Unreachable, http_connection
from guard.shown import masked
from notify import DeliveryError, NotReached, targets
from store.clock import to_epoch

# The whole attempt (resolve, connect, TLS, send, read the answer) ends by then.
DEADLINE_SECONDS = 10
USER_AGENT = "rua-webhooks/1"
# Stored as the attempt's error and shown by `rua notify list`: the URL is a tenant's, so what
# failed on the network (address, port, refused or silent) stays in the operator's log.
NOT_REACHED = (f"the receiver could not be reached (no connection, or no answer within "
               f"{DEADLINE_SECONDS} s)")
log = logging.getLogger("rua.notify")


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def signed_headers(secret: str, webhook_id: str, body: str, now: datetime) -> dict[str, str]:
    """The three Standard Webhooks headers for `body`; the timestamp is this attempt's."""
    signature = Webhook(secret).sign(msg_id=webhook_id, timestamp=now, data=body)
    return {"webhook-id": webhook_id, "webhook-timestamp": str(to_epoch(now)),
            "webhook-signature": signature}


def send(url: str, secret: str, webhook_id: str, body: str, now: datetime, config) -> None:
    """POST the signed body once; NotReached or DeliveryError unless the receiver answers 2xx."""
    headers = {"content-type": "application/json", "user-agent": USER_AGENT,
               **signed_headers(secret, webhook_id, body, now)}
    with Deadline(DEADLINE_SECONDS) as deadline:
        try:
            target = targets.check(url, config)
            status, reason = _post(target, body, headers, config, deadline)
        except ssl.SSLCertVerificationError:
            raise DeliveryError(f"the receiver's certificate is not valid for "
                                f"{targets.split(url)[1]}") from None
        except (targets.RefusedUrl, Unreachable, OSError, http.client.HTTPException) as exc:
            detail = "no answer in time" if deadline.expired else str(exc) or type(exc).__name__
            log.info("webhook %s not reached: %s", masked(url, query=True), detail)
            raise NotReached(NOT_REACHED) from None
    if not 200 <= status < 300:
        raise DeliveryError(f"receiver answered HTTP {status} {reason}"[:200])


def _post(target: targets.Target, body: str, headers: dict, config,
          deadline: Deadline) -> tuple[int, str]:
    connection = http_connection(target.scheme, target.host, target.port,
                                 list(target.addresses),
                                 allow_private=config.outbound_unsafe_allow_private,
                                 deadline=deadline)
    try:
        connection.request("POST", target.path, body=body.encode(), headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)
        if deadline.expired:      # the answer was cut off: it may not be what was meant
            raise TimeoutError
        return response.status, response.reason
    finally:
        connection.close()
