"""The list envelope: rows under their own key, plus total, limit and offset as applied."""
from __future__ import annotations

from webapp.params import Page


def envelope(key: str, query, page: Page, shape=None, **extra) -> dict:
    """Run one page of an ordered query and its count; shape turns a row into a dict."""
    rows = list(query.limit(page.limit).offset(page.offset))
    total = _total(query, page, len(rows))
    return {key: [shape(r) for r in rows] if shape else rows,
            "total": total, "limit": page.limit, "offset": page.offset, **extra}


def _total(query, page: Page, fetched: int) -> int:
    # A short page that starts inside the results already tells the total: no COUNT needed.
    if 0 < fetched < page.limit or (fetched == 0 and page.offset == 0):
        return page.offset + fetched
    return query.order_by().count()
