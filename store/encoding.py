"""JSON bytes for every response and blob: UTC `Z` timestamps with whole seconds, dates as
YYYY-MM-DD; and CSV cells a spreadsheet cannot run, for the API's downloads and `rua export`."""
import orjson

OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_OMIT_MICROSECONDS
# A spreadsheet runs a cell starting with these as a formula; report fields come from strangers.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def dumps(value) -> bytes:
    return orjson.dumps(value, option=OPTIONS)


def loads(data):
    return orjson.loads(data)


def safe_cell(value):
    """The value, with a leading ' when a spreadsheet would read it as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
