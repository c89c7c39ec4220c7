"""RUA_LOG_FORMAT: text lines or JSON lines, times in RFC 3339 UTC."""
from __future__ import annotations

import io
import json
import logging
import re

import pytest

import logs
from config import Config, ConfigError


@pytest.fixture
def configured():
    def configure(**settings):
        stream = io.StringIO()
        logs.configure(Config(**settings), stream)
        return stream
    yield configure
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "rua", False)]:
        root.removeHandler(handler)


def test_json_lines_carry_time_level_logger_message_and_the_line_s_fields(configured):
    stream = configured(log_format="json")
    logging.getLogger("rua.test").info("job %s ok", "dns", extra={"job": "dns"})
    line = json.loads(stream.getvalue())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", line["time"])
    assert (line["level"], line["logger"], line["message"], line["job"]) == (
        "INFO", "rua.test", "job dns ok", "dns")


def test_text_lines_start_with_an_rfc_3339_time(configured):
    stream = configured()
    logging.getLogger("rua.test").warning("careful")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ WARNING rua.test careful\n",
                        stream.getvalue())


def test_configuring_again_replaces_rua_s_handler_and_keeps_others(configured):
    other = logging.NullHandler()
    logging.getLogger().addHandler(other)
    try:
        configured()
        configured(log_format="json")
        ours = [h for h in logging.getLogger().handlers if getattr(h, "rua", False)]
        assert len(ours) == 1 and other in logging.getLogger().handlers
    finally:
        logging.getLogger().removeHandler(other)


def test_an_unknown_format_is_refused_naming_the_choices():
    with pytest.raises(ConfigError, match="RUA_LOG_FORMAT='xml' is not one of text, json"):
        logs.configure(Config(log_format="xml"), io.StringIO())
