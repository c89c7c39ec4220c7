"""JSON bytes for every response and blob: UTC `Z` timestamps with whole seconds, dates as YYYY-MM-DD."""
import orjson

OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_OMIT_MICROSECONDS


def dumps(value) -> bytes:
    return orjson.dumps(value, option=OPTIONS)


def loads(data):
    return orjson.loads(data)
