"""Pushing deliverable events out: signed webhooks and e-mail, drained from the store's outbox.

targets.py judges webhook URLs, message.py writes what is sent (pure), webhook.py and email.py
send one message each, drain.py claims due outbox rows and records what became of them.
"""


class DeliveryError(Exception):
    """One attempt failed; the message says why in a line (kept as the row's last_error)."""


class NotReached(DeliveryError):
    """No exchange with the receiver at all (refused address, no connection, deadline passed):
    its other deliveries in the same run would only wait on it again."""
