"""The declared shapes against webapp/openapi.json field by field, and the bodies served from
a generated store against the shapes: the document, the code and the wire agree."""
from __future__ import annotations

import json
import pathlib

import pytest

from shapes import bodies
from snapshotter import jobs
from tests.factories import make_domain, make_tls_report
from tests.ingest import tlsbuild
from tests.shapes.conformance import against_schema, against_shape
from tests.snapshotter.reports import NOW, mixed_org
from tests.webapp.conftest import app, client, clock, key, org  # noqa: F401
from tests.webapp.helpers import get

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "webapp" / "openapi.json")
                      .read_text())

# Each route whose body has a declared shape: (request, shape, the document's schema).
ROUTES = [
    ("/dashboard/overview", bodies.Overview, "Overview"),
    ("/compliance-score", bodies.ComplianceScore, "ComplianceScore"),
    ("/compliance-score?domain=example.com", bodies.ComplianceScore, "ComplianceScore"),
    ("/compliance-score/history", bodies.ScoreHistory, "ScoreHistory"),
    ("/trends?days=30", bodies.Trends, "Trends"),
    ("/trends?days=30&domain=example.org", bodies.Trends, "Trends"),
    ("/domains/example.com/health", bodies.DomainHealth, "DomainHealth"),
    ("/domains/quiet.example/health", bodies.DomainHealth, "DomainHealth"),
]


def response_schema(path: str) -> dict:
    return DOCUMENT["paths"][path]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"]


@pytest.mark.parametrize("shape, name", sorted({(s, n) for _, s, n in ROUTES},
                                               key=lambda pair: pair[1]))
def test_each_shape_is_its_schema_in_the_document_field_by_field(shape, name):
    schema = {"$ref": f"#/components/schemas/{name}"}
    assert against_schema(shape, schema, DOCUMENT) == []


def test_each_route_answers_the_schema_its_shape_is_checked_against():
    for request, _, name in ROUTES:
        path = request.split("?")[0].replace("example.com", "{domain}").replace(
            "quiet.example", "{domain}")
        assert response_schema(path) == {"$ref": f"#/components/schemas/{name}"}, request


def test_a_field_the_document_lacks_is_found():
    class Extra(bodies.ActionItemsSummary):
        urgent: int
    assert against_schema(Extra, {"$ref": "#/components/schemas/Overview"}["$ref"] and
                          DOCUMENT["components"]["schemas"]["Overview"]["properties"]
                          ["action_items_summary"], DOCUMENT) == [
        ".urgent: declared, not in the document",
        ".: required ['high', 'low', 'medium', 'total_pending', 'urgent'] in the shape, "
        "['high', 'low', 'medium', 'total_pending'] in the document"]


def test_a_body_field_the_shape_lacks_is_found():
    body = {"total_pending": 1, "high": 1, "medium": 0, "low": 0, "urgent": 1}
    assert against_shape(body, bodies.ActionItemsSummary) == [".urgent: served, not declared"]
    assert against_shape({**body, "high": "1"}, bodies.ActionItemsSummary)[-1] == (
        ".high: '1' is not integer")


@pytest.fixture
def generated(org, clock):
    """Two domains with reports over weeks, a TLS report, a monitored domain without any."""
    clock.now = NOW
    mixed_org(org)
    make_domain(org, "quiet.example")
    make_tls_report(org, [tlsbuild.policy()], received_at=NOW)
    jobs.refresh_org(org.id, NOW)
    return org


@pytest.mark.parametrize("request_path, shape", [(r, s) for r, s, _ in ROUTES])
def test_each_body_served_from_a_generated_store_is_its_shape(client, generated, key,
                                                              request_path, shape):
    response = get(client, request_path, key)
    assert response.status_code == 200
    assert against_shape(response.get_json(), shape) == []
