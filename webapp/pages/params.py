"""The pages' own query parameters (the API's are read by the API's functions, webapp/params.py),
and the links a page makes from its own query: sort, paging, the place to go after signing in."""
from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from flask import request

from webapp import params

# The record kinds of a domain's live DNS check, as the health answer's `dns` keys them.
DNS_KINDS = ("dmarc", "spf", "dkim", "mta_sts", "tls_rpt", "bimi", "dane")
CHART_DAYS = (30, 90, 365)
HOME = "/"


def chart_days(args) -> int:
    """How many days the charts cover: 30, 90 or 365 (anything else: 30)."""
    days = params.days(args, default=CHART_DAYS[0], lo=1, hi=CHART_DAYS[-1])
    return days if days in CHART_DAYS else CHART_DAYS[0]


def record_kind(args) -> str | None:
    """The DNS record kind a /domains/{d}/dns link names; None shows them all."""
    return params.choice(args, "record", DNS_KINDS, None)


def local_path(target: str | None) -> str:
    """Where to go after signing in: a path on this site only (never another host), else home."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return HOME
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in target):
        return HOME
    return target


def with_args(**changes) -> str:
    """This page's path and query with some parameters changed (None removes one)."""
    query = request.args.to_dict(flat=False)
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = [str(value)]
    encoded = urlencode(query, doseq=True)
    return request.path + ("?" + encoded if encoded else "")


def sorted_by(name: str, default_sort: str) -> str:
    """The link a column heading makes: sort by it, descending first, flipping when it is on."""
    current = (request.args.get("sort_by") or default_sort).lower()
    descending = params.descending(request.args)
    direction = "asc" if current == name and descending else "desc"
    return with_args(sort_by=name, sort_dir=direction, offset=None)
