"""Field-by-field checks: a declared shape (shapes/bodies.py) against a schema of
webapp/openapi.json, and a served body against its shape. Each returns its mismatches as
"path: what" lines, none when they agree."""
from __future__ import annotations

import types
import typing
from datetime import date, datetime
from typing import Literal, get_args, get_origin, get_type_hints, is_typeddict

# The JSON type each Python type of a shape is written as (orjson writes days and instants as
# strings).
JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean",
              type(None): "null", date: "string", datetime: "string"}


def members(annotation) -> list:
    """The alternatives of a union, or the annotation alone."""
    if get_origin(annotation) in (typing.Union, types.UnionType):
        return list(get_args(annotation))
    return [annotation]


def json_type(annotation) -> str:
    if is_typeddict(annotation):
        return "object"
    if get_origin(annotation) is list:
        return "array"
    if get_origin(annotation) is Literal:
        return JSON_TYPES[type(get_args(annotation)[0])]
    return JSON_TYPES[annotation]


def resolve(schema: dict, document: dict) -> dict:
    """The schema with its reference followed and an allOf's members merged into one object."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = {**document["components"]["schemas"][name],
                  **{k: v for k, v in schema.items() if k != "$ref"}}
    if "allOf" in schema:
        parts = [resolve(part, document) for part in schema["allOf"]]
        schema = {"type": "object",
                  "properties": {k: v for part in parts for k, v in part["properties"].items()},
                  "required": [name for part in parts for name in part.get("required", [])]}
    return schema


def alternatives(schema: dict, document: dict) -> list[dict]:
    """The schema's alternatives (anyOf/oneOf members, one per listed type), references
    resolved: each has one JSON type."""
    schema = resolve(schema, document)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return [a for member in schema[key] for a in alternatives(member, document)]
    kinds = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kinds, list):
        return [{**schema, "type": kind} for kind in kinds]
    return [{**schema, "type": kinds}]


def against_schema(annotation, schema: dict, document: dict, path: str = "") -> list[str]:
    """Where a shape and a schema of the document disagree: field names, which are required,
    JSON types, enumerations, and the same for every object they hold."""
    schemas = {s["type"]: s for s in alternatives(schema, document)}
    shapes = {json_type(m): m for m in members(annotation)}
    if set(shapes) != set(schemas):
        return [f"{path or '.'}: the shape is {sorted(shapes)}, the document {sorted(schemas)}"]
    problems = []
    for kind, shape in shapes.items():
        problems += _inside(shape, schemas[kind], document, path)
    return problems


def _inside(shape, schema: dict, document: dict, path: str) -> list[str]:
    if shape is type(None):
        return []
    if get_origin(shape) is Literal:
        if "enum" in schema and set(get_args(shape)) != set(schema["enum"]) - {None}:
            return [(f"{path}: the shape allows {sorted(get_args(shape))}, "
                     f"the document {sorted(schema['enum'])}")]
        return []
    if "enum" in schema and shape is not str:
        return [f"{path}: the document lists values {schema['enum']}, the shape no Literal"]
    # A str against an enumeration: a registry lists the values (webapp/openapi_enums.py
    # writes them into the document, tests/webapp/test_openapi_enums.py checks them).
    if get_origin(shape) is list:
        return against_schema(get_args(shape)[0], schema.get("items", {}), document, path + "[]")
    if not is_typeddict(shape):
        return []
    hints, properties = get_type_hints(shape), schema.get("properties", {})
    problems = [f"{path}.{name}: declared, not in the document"
                for name in sorted(set(hints) - set(properties))]
    problems += [f"{path}.{name}: in the document, not declared"
                 for name in sorted(set(properties) - set(hints))]
    if set(shape.__required_keys__) != set(schema.get("required", [])):
        problems.append(f"{path or '.'}: required {sorted(shape.__required_keys__)} in the "
                        f"shape, {sorted(schema.get('required', []))} in the document")
    for name in sorted(set(hints) & set(properties)):
        problems += against_schema(hints[name], properties[name], document, f"{path}.{name}")
    return problems


def against_shape(value, annotation, path: str = "") -> list[str]:
    """Where a body (parsed JSON) strays from its shape: a field missing or undeclared, a
    value of another type or outside its Literal."""
    problems = []
    for shape in members(annotation):
        problems = _value(value, shape, path)
        if not problems:
            return []
    return problems


def _value(value, shape, path: str) -> list[str]:
    kind = json_type(shape)
    if kind == "null":
        return [] if value is None else [f"{path}: {value!r} is not null"]
    if get_origin(shape) is Literal:
        return [] if value in get_args(shape) else [f"{path}: {value!r} not in the Literal"]
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not an array"]
        return [p for i, item in enumerate(value)
                for p in against_shape(item, get_args(shape)[0], f"{path}[{i}]")]
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object"]
        hints = get_type_hints(shape)
        problems = [f"{path}.{name}: served, not declared" for name in sorted(set(value) - set(hints))]
        problems += [f"{path}.{name}: declared required, not served"
                     for name in sorted(shape.__required_keys__ - set(value))]
        return problems + [p for name in sorted(set(value) & set(hints))
                           for p in against_shape(value[name], hints[name], f"{path}.{name}")]
    python = {"integer": int, "number": (int, float), "string": str, "boolean": bool}[kind]
    if isinstance(value, bool) and kind != "boolean" or not isinstance(value, python):
        return [f"{path}: {value!r} is not {kind}"]
    return []
