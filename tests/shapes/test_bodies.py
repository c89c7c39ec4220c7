"""The declared shapes against webapp/openapi.json field by field, and the bodies served from
a generated store against the shapes: the document, the code and the wire agree."""
from __future__ import annotations

import json
import pathlib
from datetime import timedelta

import pytest

from shapes import bodies, reports, resources
from snapshotter import jobs
from store.models import Report, TlsReport
from tests.factories import make_domain, make_tls_report
from tests.ingest import tlsbuild
from tests.shapes.conformance import against_schema, against_shape
from tests.snapshotter.reports import NOW, TODAY, mixed_org, report_on
from tests.webapp.conftest import app, client, clock, key, org  # noqa: F401
from tests.webapp.helpers import get

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "webapp" / "openapi.json")
                      .read_text())

# Each route whose body has a declared shape: (request, shape, the document's schema).
ROUTES = [
    ("/dashboard/overview", bodies.OverviewBody, "Overview"),
    ("/compliance-score", bodies.ComplianceScoreBody, "ComplianceScore"),
    ("/compliance-score?domain=example.com", bodies.ComplianceScoreBody, "ComplianceScore"),
    ("/compliance-score/history", bodies.ScoreHistoryBody, "ScoreHistory"),
    ("/trends?days=30", bodies.TrendsBody, "Trends"),
    ("/trends?days=30&domain=example.org", bodies.TrendsBody, "Trends"),
    ("/domains/example.com/health", bodies.DomainHealthBody, "DomainHealth"),
    ("/domains/quiet.example/health", bodies.DomainHealthBody, "DomainHealth"),
    ("/statistics", resources.StatisticsBody, "Statistics"),
    ("/reports/date-range", resources.ReportDateRangeBody, "ReportDateRange"),
    ("/domains", resources.DomainListBody, "DomainList"),
    ("/top-sources", resources.TopSourceListBody, "TopSourceList"),
    ("/events", resources.EventListBody, "EventList"),
    ("/api-keys/usage", resources.UsageBody, "Usage"),
    ("/enums", resources.EnumsBody, "Enums"),
    ("/reports", resources.ReportListBody, "ReportList"),
    ("/tls-reports", resources.TlsReportListBody, "TlsReportList"),
    ("/sources", resources.SourceListBody, "SourceList"),
    ("/sources/192.0.2.1", resources.SourceDetailBody, "SourceDetail"),
    ("/reports/{report}", reports.ReportDetailBody, "ReportDetail"),
    ("/tls-reports/{tls_report}", reports.TlsReportDetailBody, "TlsReportDetail"),
]
# The routes' paths as the document writes them.
DOCUMENTED = {"example.com": "{domain}", "quiet.example": "{domain}", "192.0.2.1": "{ip}",
              "{report}": "{id}", "{tls_report}": "{id}"}


def response_schema(path: str) -> dict:
    return DOCUMENT["paths"][path]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"]


@pytest.mark.parametrize("shape, name", sorted({(s, n) for _, s, n in ROUTES},
                                               key=lambda pair: pair[1]))
def test_each_shape_is_its_schema_in_the_document_field_by_field(shape, name):
    assert shape.__name__ == name + "Body"
    schema = {"$ref": f"#/components/schemas/{name}"}
    assert against_schema(shape, schema, DOCUMENT) == []


def documented(request: str) -> str:
    """The document's path of a request of ROUTES."""
    path = request.split("?")[0]
    for value, parameter in DOCUMENTED.items():
        path = path.replace(value, parameter)
    return path


def test_each_route_answers_the_schema_its_shape_is_checked_against():
    for request, _, name in ROUTES:
        schema = response_schema(documented(request))
        # /reports answers with format=json an array of its rows (a download) instead.
        assert {"$ref": f"#/components/schemas/{name}"} in schema.get("oneOf", [schema]), request


def test_a_field_the_document_lacks_is_found():
    class Extra(bodies.ActionItemsSummaryBody):
        urgent: int
    summary = DOCUMENT["components"]["schemas"]["Overview"]["properties"]["action_items_summary"]
    assert against_schema(Extra, summary, DOCUMENT) == [
        ".urgent: declared, not in the document",
        (".: required ['high', 'low', 'medium', 'total_pending', 'urgent'] in the shape, "
         "['high', 'low', 'medium', 'total_pending'] in the document")]


def test_a_body_field_the_shape_lacks_is_found():
    body = {"total_pending": 1, "high": 1, "medium": 0, "low": 0, "urgent": 1}
    assert against_shape(body, bodies.ActionItemsSummaryBody) == [".urgent: served, not declared"]
    assert against_shape({**body, "high": "1"}, bodies.ActionItemsSummaryBody)[-1] == (
        ".high: '1' is not integer")


@pytest.fixture
def generated(org, clock):
    """Two domains with reports over weeks, one read with a warning (an event), a TLS report
    with failures, a monitored domain without any report."""
    clock.now = NOW
    mixed_org(org)
    report_on(org, "example.com", TODAY - timedelta(days=1), [{"count": 1}], warnings=["odd"],
              received_at=NOW - timedelta(hours=3))
    make_domain(org, "quiet.example")
    make_tls_report(org, [tlsbuild.policy(failed=2, failures={"certificate-expired": 2})],
                    start="2026-03-30T00:00:00Z", end="2026-03-30T23:59:59Z", received_at=NOW)
    jobs.refresh_org(org.id, NOW)
    return org


@pytest.mark.parametrize("request_path, shape", [(r, s) for r, s, _ in ROUTES])
def test_each_body_served_from_a_generated_store_is_its_shape(client, generated, key,
                                                              request_path, shape):
    report, tls_report = Report.select().first(), TlsReport.select().first()
    response = get(client, request_path.format(report=report.id, tls_report=tls_report.id), key)
    assert response.status_code == 200
    assert against_shape(response.get_json(), shape) == []


def test_the_generated_store_fills_every_list_the_shapes_are_walked_through(client, generated,
                                                                            key):
    """Else an item's shape would be checked against no item at all."""
    assert get(client, "/events", key).get_json()["events"]
    assert get(client, "/domains", key).get_json()["domains"]
    assert get(client, "/top-sources", key).get_json()["sources"]
    assert get(client, "/api-keys/usage", key).get_json()["keys"]
    assert get(client, "/sources", key).get_json()["sources"]
    assert get(client, "/sources/192.0.2.1", key).get_json()["timeline"]
    assert get(client, "/reports", key).get_json()["reports"]
    assert get(client, "/tls-reports", key).get_json()["tls_reports"]
    health = get(client, "/domains/example.com/health", key).get_json()
    assert health["tls"]["failure_types"] is not None and health["action_items"]
    overview = get(client, "/dashboard/overview", key).get_json()
    assert overview["domain_cards"] and "empty_state" in get(
        client, "/domains/quiet.example/health", key).get_json()


def test_every_documented_route_has_a_shape_here():
    routes = {documented(request) for request, _, _ in ROUTES}
    assert routes == set(DOCUMENT["paths"]) - {"/openapi.json"}
