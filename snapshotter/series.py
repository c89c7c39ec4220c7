"""Slices of a stored points array, by count or by day, on the bytes (never parsed again).

A stored series is the JSON array of flat point objects whose first key is a day
(`{"date":"YYYY-MM-DD",...}`); no value holds braces, so `},{` separates points exactly.
"""
from __future__ import annotations

SEPARATOR = b"},{"


def _points(body: bytes) -> list[bytes]:
    inner = body[2:-2]             # without the leading `[{` and the trailing `}]`
    return inner.split(SEPARATOR) if inner else []


def _join(points: list[bytes]) -> bytes:
    return b"[{" + SEPARATOR.join(points) + b"}]" if points else b"[]"


def last(body: bytes, count: int) -> bytes:
    """The last `count` points."""
    points = _points(body)
    return _join(points[max(0, len(points) - count):])


def since(body: bytes, first_day: str) -> bytes:
    """The points whose day (the first value, `"key":"YYYY-MM-DD"`) is on or after first_day."""
    wanted = first_day.encode()
    kept = [p for p in _points(body) if p[p.index(b':"') + 2:][:10] >= wanted]
    return _join(kept)


def envelope(days: int, points: bytes) -> bytes:
    """`{"days":N,"points":[...]}` around a slice."""
    return b'{"days":' + str(int(days)).encode() + b',"points":' + points + b"}"
