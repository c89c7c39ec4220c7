"""Headers every answer carries: nosniff always, no-store unless the view chose its caching.

Snapshot answers say `private, no-cache` themselves (webapp.snapshot_answers) and the public
documents their own max-age; everything else a key reads (report lists and details, downloads,
statistics, usage, sources, events, errors) must not be kept by a browser or proxy.
"""
from __future__ import annotations

NOSNIFF = ("X-Content-Type-Options", "nosniff")


def add(response):
    """After every request handled by Flask (errors included)."""
    headers = response.headers
    if NOSNIFF[0] not in headers:
        headers[NOSNIFF[0]] = NOSNIFF[1]
    if "Cache-Control" not in headers:
        headers["Cache-Control"] = "no-store"
    return response
