"""The list envelope: rows under their own key, plus total, limit and offset as applied."""
from __future__ import annotations

from webapp.params import Page


def envelope(key: str, query, page: Page, shape=None, count=None, rows=None, **extra) -> dict:
    """One page of an ordered query (or rows(page), when given) and the total of its matches
    (count(), by default a COUNT of the query); shape turns a row into a dict."""
    rows = rows(page) if rows else list(query.limit(page.limit).offset(page.offset))
    total = _total(count or query.order_by().count, page, len(rows))
    return {key: [shape(r) for r in rows] if shape else rows,
            "total": total, "limit": page.limit, "offset": page.offset, **extra}


def _total(count, page: Page, fetched: int) -> int:
    # A short page that starts inside the results already tells the total: no COUNT needed.
    if 0 < fetched < page.limit or (fetched == 0 and page.offset == 0):
        return page.offset + fetched
    return count()


def window(key: str, rows: list, page: Page, shape=None, **extra) -> dict:
    """The envelope of one page of rows already read in full (total = all of them)."""
    chosen = rows[page.offset:page.offset + page.limit]
    return {key: [shape(r) for r in chosen] if shape else chosen,
            "total": len(rows), "limit": page.limit, "offset": page.offset, **extra}
