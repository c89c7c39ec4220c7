"""Property-based requests generated from webapp/openapi.json against the live WSGI app.

Every operation gets generated parameters (types, enums and ranges of the document), sent with
a valid key to a store holding a few reports; every answer must be free of 5xx and match the
status codes, content types, headers and schemas the document gives it. Bounded and
derandomized, so a run is quick and repeatable.
"""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.generation import GenerationMode

from store import events
from store.clock import utcnow
from store.models import Source
from tests.factories import make_domain, make_report, make_tls_report
from tests.ingest.tlsbuild import policy
from tests.test_contract import DOC, NOT_YET_BUILT, SteppingClock

EXAMPLES_PER_OPERATION = 12


@pytest.fixture
def clock():
    return SteppingClock()


@pytest.fixture
def api_schema(app, org, key):
    """The served document bound to the app, on a store holding a few reports."""
    make_domain(org, "example.com")
    first = make_report(org, "example.com")
    make_report(org, "example.com", [{"source_ip": "198.51.100.7", "count": 40, "dkim": "fail",
                                      "spf": "fail"}], p="reject")
    make_report(org, "mail.example.org", [{"source_ip": "2001:db8::25", "count": 3, "spf": "fail"}],
                org_name="other-reporter.example")
    forwarded = {"source_ip": "203.0.113.9", "count": 5, "dkim": "fail", "spf": "fail",
                 "reasons": [{"Type": "mailing_list", "Comment": "list"}]}
    make_report(org, "example.com", [forwarded], warnings=["The report names no contact address."],
                org_name="=formula.example")
    # A recognised sender, so optional service fields appear in the answers too.
    Source.update(service_name="Example Mailer", service_slug="example-mailer", service_icon="mail",
                  service_kind="esp", ptr="out.mailer.example", abuse_status="clean",
                  blocklist={"status": "clean", "listed_on": [], "checked_at": "2024-03-01T00:00:00Z"},
                  country="NL", country_name="Netherlands", asn=64500, as_org="Example Net",
                  enriched_at=utcnow()).where(Source.ip == "198.51.100.7").execute()
    # Events open and handled, organization-wide and with a link, so /events has rows to check.
    events.raise_event(org.id, "compliance_drop", "compliance_drop:example.com",
                       title="Compliance dropped", domain="example.com",
                       link="/domains/example.com/health")
    events.raise_event(org.id, "quota_near_cap", "quota_near_cap:0",
                       title="API quota nearly spent")
    events.clear(org.id, ["quota_near_cap:0"])
    tls = make_tls_report(org, [policy("example.com", 40, 2, {"certificate-expired": 2},
                                       **{"mx-host": "mx.example.com"}), policy("example.org")],
                          contact=None)
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    # Path values that exist, so the 200 answers of /reports/{id} and the health are checked
    # as well as the 404s random values get.
    return schema, {"id": first.id.lower(), "domain": "Example.com", "ip": "198.51.100.7",
                    "tls_id": tls.id}


# One test per documented operation, named after it; the operations waiting for later work are
# skipped by name (tests.test_contract.NOT_YET_BUILT), not silently left out.
OPERATIONS = [("GET", path) for path in sorted(DOC["paths"])]


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_generated_requests_get_no_5xx_and_answers_match_the_document(api_schema, key, method, path):
    if path in NOT_YET_BUILT:
        pytest.skip(f"{path} waits for {NOT_YET_BUILT[path]}")
    # The contract accepts out-of-range paging and day values (clamped or defaulted), so
    # "invalid" generated data is legitimately answered 200: generate valid requests only.
    schema, existing = api_schema
    operation = schema[path][method]
    auth = {"Authorization": f"Bearer {key}"}

    @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
           use_existing=st.booleans())
    @settings(max_examples=EXAMPLES_PER_OPERATION, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def check(case, use_existing):
        if use_existing and case.path_parameters:
            tls = path.startswith("/tls-reports/")
            case.path_parameters = {name: existing["tls_id" if tls else name]
                                    for name in case.path_parameters}
        response = case.call_and_validate(headers=auth)
        # A documented path must be routed: its own 404s name the missing resource.
        assert b'"route_not_found"' not in response.content, case.formatted_path

    check()
