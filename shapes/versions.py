"""The version of a body's shape: a short hash of its field names, nested fields included, so
a snapshot stored under another shape is known at a glance (store/snapshots.py keeps it with
the blob; the serving path treats another version as missing)."""
from __future__ import annotations

import hashlib
import types
import typing
from typing import get_args, get_origin, get_type_hints, is_typeddict


def fields(shape) -> list[str]:
    """Every field of a shape as a dotted path ("org_health.grade"), sorted; optional fields
    end in "?". Lists and unions are looked through to the objects they hold."""
    out = []
    if is_typeddict(shape):
        hints = get_type_hints(shape)
        for name in sorted(hints):
            mark = "" if name in shape.__required_keys__ else "?"
            out.append(name + mark)
            out += [f"{name}.{inner}" for inner in fields(hints[name])]
    elif get_origin(shape) in (list, typing.Union, types.UnionType):
        for arg in get_args(shape):
            out += fields(arg)
    return out


def version(shape) -> str:
    """12 hex digits naming the shape's fields."""
    return hashlib.sha256("\n".join(fields(shape)).encode()).hexdigest()[:12]
