"""Slices of a stored points array, by count or by day, on the bytes (never parsed again).

A stored series is the compact JSON array of flat point objects (orjson's output) whose first
key names a day (`[{"date":"YYYY-MM-DD",...},...]`). Points are cut where `},{"<first key>":`
stands, which only a point's start can be: a quote inside a value is escaped, and a value's
closing quote is never followed by a key and a colon, whatever braces its values hold.
"""
from __future__ import annotations


def _points(body: bytes) -> tuple[bytes, list[bytes]]:
    """(the first key as `"key":`, each point's text after it and before its closing `}`)."""
    if body == b"[]":
        return b"", []
    inner = body[2:-2]             # without the leading `[{` and the trailing `}]`
    key = inner[:inner.index(b'":') + 2]
    return key, inner[len(key):].split(b"},{" + key)


def _join(key: bytes, points: list[bytes]) -> bytes:
    return b"[{" + key + (b"},{" + key).join(points) + b"}]" if points else b"[]"


def last(body: bytes, count: int) -> bytes:
    """The last `count` points."""
    key, points = _points(body)
    return _join(key, points[max(0, len(points) - count):])


def since(body: bytes, first_day: str) -> bytes:
    """The points whose day (the first value, `"YYYY-MM-DD"`) is on or after first_day."""
    key, points = _points(body)
    wanted = first_day.encode()
    return _join(key, [p for p in points if p[1:11] >= wanted])


def envelope(days: int, points: bytes) -> bytes:
    """`{"days":N,"points":[...]}` around a slice."""
    return b'{"days":' + str(int(days)).encode() + b',"points":' + points + b"}"
