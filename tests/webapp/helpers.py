"""Three-line tests: GET with a key, and the standard error body."""
from __future__ import annotations


def get(client, path: str, key: str | None = None, base: str = "/api/v1", **headers):
    """GET base + path with the key as a bearer token."""
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return client.get(base + path, headers=headers)


def assert_error(resp, status: int, code: str, **extra):
    """The response is the standard error body with this status and code."""
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/json"
    body = resp.get_json()
    expected = {"error": _REASONS[status], "code": code, **extra}
    assert body == expected


_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


def detail_at_once(org_id: str, report_id: str) -> dict:
    """The report detail built from all its records at once: the oracle of the streamed body."""
    from store import report_queries
    from webapp.report_detail import PerRecord, layout
    records = [row for page in report_queries.RecordPages(org_id, report_id) for row in page]
    body = {}
    for name, value in layout(report_queries.report(org_id, report_id)):
        if isinstance(value, PerRecord):
            value = [value.shape(record) for record in records]
        body[name] = value
    return body
