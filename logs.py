"""One log format for every rua process: text lines, or JSON lines when RUA_LOG_FORMAT=json."""
from __future__ import annotations

import logging
import sys
import time

from pythonjsonlogger.json import JsonFormatter

from config import LOG_FORMATS, ConfigError

# RFC 3339 UTC, whole seconds, as every time rua shows.
DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def formatter(log_format: str) -> logging.Formatter:
    """The formatter for RUA_LOG_FORMAT; JSON lines carry each record's extra fields."""
    if log_format.lower() not in LOG_FORMATS:
        raise ConfigError(f"RUA_LOG_FORMAT={log_format!r} is not one of {', '.join(LOG_FORMATS)}")
    if log_format.lower() == "json":
        made = JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s",
                             rename_fields={"asctime": "time", "levelname": "level",
                                            "name": "logger"},
                             datefmt=DATE_FORMAT)
    else:
        made = logging.Formatter(TEXT_FORMAT, datefmt=DATE_FORMAT)
    made.converter = time.gmtime
    return made


def configure(config, stream=None) -> None:
    """Send every rua logger's lines to stderr (or stream) in the configured format."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(config.log_format))
    handler.rua = True
    root = logging.getLogger()
    # Configured again (a test, a reload): ours is replaced, any other handler is left alone.
    for old in [h for h in root.handlers if getattr(h, "rua", False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(config.log_level.upper())
