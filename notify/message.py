"""What is sent for an event: the webhook's JSON body and the e-mail's subject and text (pure)."""
from __future__ import annotations

from datetime import datetime

from store.clock import rfc3339
from store.encoding import dumps
from store.event_queries import shape

TEST_TYPE = "test"


def event_fields(event, org_name: str, app_url: str = "") -> dict:
    """The event as /events shows it, plus its organization's name; its link absolute on
    app_url (RUA_APP_URL) when set, since a message read elsewhere has no page to resolve it."""
    fields = shape(event)
    return {**fields, "link": app_link(fields["link"], app_url), "organization": org_name}


def app_link(link: str | None, app_url: str) -> str | None:
    """An in-app path as an absolute URL on app_url; unchanged without one or when absolute."""
    if not link or not app_url or not link.startswith("/"):
        return link
    return app_url.rstrip("/") + link


def webhook_body(type_: str, data: dict, now: datetime) -> str:
    """A Standard Webhooks payload: {type, timestamp, data}, compact JSON text."""
    return dumps({"type": type_, "timestamp": now, "data": data}).decode()


def email_subject(data: dict) -> str:
    where = f" ({data['domain']})" if data["domain"] else ""
    return f"[rua] {data['type_label']}: {data['title']}{where}"


def email_text(data: dict) -> str:
    """A plain-text body: what happened, where, how serious, and the link to act on it."""
    lines = [data["title"], ""]
    if data["detail"]:
        lines += [data["detail"], ""]
    lines += [f"Type: {data['type_label']} ({data['type']})",
              f"Severity: {data['severity']}",
              f"Organization: {data['organization']}"]
    if data["domain"]:
        lines.append(f"Domain: {data['domain']}")
    if data["link"]:
        lines.append(f"Link: {data['link']}")
    lines += [f"Raised: {rfc3339(data['created_at'])}", "",
              "Sent by rua for a notification channel of this organization "
              "(rua notify list shows them)."]
    return "\n".join(lines) + "\n"


def probe_fields(org_name: str, now: datetime) -> dict:
    """A message `rua notify test` sends: shaped like an event, said to be a test."""
    return {"id": "", "type": TEST_TYPE, "type_label": "Test message", "severity": "info",
            "title": "Test message from rua", "detail": "This channel is set up and reachable.",
            "domain": "", "link": None, "acknowledged": False, "created_at": now,
            "organization": org_name}

