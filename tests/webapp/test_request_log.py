"""One log line per request, and the request id every answer carries.

The line is written when the server closes the answer (after its last byte), as gunicorn does:
the test client does that for a buffered request.
"""
from __future__ import annotations

import io
import json
import logging

import pytest

import logs


def _bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def lines(config):
    """What rua's request logger writes, as JSON objects."""
    stream = io.StringIO()
    logs.configure(config.replace(log_format="json"), stream)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    for handler in [h for h in logging.getLogger().handlers if getattr(h, "rua", False)]:
        logging.getLogger().removeHandler(handler)


def test_every_answer_carries_a_request_id_and_each_request_is_one_line(client, key, lines):
    served = client.get("/api/v1/enums", headers=_bearer(key), buffered=True)
    refused = client.get("/api/v1/enums", buffered=True)
    ids = [served.headers["X-Request-Id"], refused.headers["X-Request-Id"]]
    assert ids[0] != ids[1]
    logged = [line for line in lines() if line["logger"] == "rua.request"]
    assert [(line["method"], line["path"], line["status"], line["request_id"])
            for line in logged] == [("GET", "/api/v1/enums", 200, ids[0]),
                                    ("GET", "/api/v1/enums", 401, ids[1])]


def test_a_well_formed_request_id_from_the_client_is_kept_and_a_bad_one_replaced(client, lines):
    kept = client.get("/healthz", headers={"X-Request-Id": "edge-42.a_b"})
    replaced = client.get("/healthz", headers={"X-Request-Id": "bad id with spaces and é"})
    assert kept.headers["X-Request-Id"] == "edge-42.a_b"
    assert replaced.headers["X-Request-Id"] != "bad id with spaces and é"
    assert len(replaced.headers["X-Request-Id"]) == 26


def test_an_error_body_s_logged_id_is_the_one_the_answer_carries(client, key, lines):
    response = client.get("/api/v1/enums", headers={"Authorization": "Bearer nope"},
                          buffered=True)
    assert response.headers.getlist("X-Request-Id") == [lines()[-1]["request_id"]]


def test_no_key_or_query_reaches_the_log(client, key, lines):
    client.get("/api/v1/reports?domain=example.com&secret=s3cr3t", headers=_bearer(key),
               buffered=True)
    text = json.dumps(lines())
    assert key not in text
    assert "s3cr3t" not in text


def test_a_path_with_control_characters_stays_on_one_line(client, config):
    stream = io.StringIO()
    logs.configure(config, stream)
    try:
        client.get("/api/v1/%0Aforged%20line", buffered=True)
    finally:
        for handler in [h for h in logging.getLogger().handlers if getattr(h, "rua", False)]:
            logging.getLogger().removeHandler(handler)
    written = [line for line in stream.getvalue().splitlines() if "rua.request" in line]
    assert len(written) == 1 and "\\x0aforged line" in written[0]
