"""webapp/openapi.json is the contract in machine-readable form: valid, complete, and the app's twin."""
from __future__ import annotations

import itertools
import json
import pathlib
import re
from datetime import timedelta

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

import store
from store.clock import utcnow
from tests.factories import make_key, make_org
from webapp import create_app

DOC = json.loads((pathlib.Path(__file__).resolve().parents[1] / "webapp" / "openapi.json").read_text())
BASE = "/api/v1"

# Paths of v1 that no module serves yet, and the work each waits for. Keep it small: a path
# leaves this list in the change that builds it (test_every_documented_path_is_served_... fails
# until it does).
NOT_YET_BUILT: dict[str, str] = {}
# Served at the site root, outside the base path and the document: the RFC 9727 catalog and
# the probes for load balancers and monitors.
ROOT_ROUTES = {"/.well-known/api-catalog", "/healthz", "/readyz"}
# Served under the base path, documented, needing no key.
PUBLIC_PATHS = {"/openapi.json"}

# The contract's endpoints: path -> permission, and the error statuses each one lists.
STANDARD = {401, 403, 429, 500, 503}
CONTRACT = {
    "/reports": ("report:read", {400}),
    "/reports/date-range": ("report:read", set()),
    "/reports/{id}": ("report:read", {400, 404}),
    "/tls-reports": ("report:read", {400}),
    "/tls-reports/{id}": ("report:read", {400, 404}),
    "/dashboard/overview": ("analytics:read", set()),
    "/statistics": ("analytics:read", {400}),
    "/compliance-score": ("analytics:read", {400}),
    "/compliance-score/history": ("analytics:read", set()),
    "/trends": ("analytics:read", {400}),
    "/top-sources": ("analytics:read", {400}),
    "/domains": ("domain:read", set()),
    "/domains/{domain}/health": ("domain:read", {400, 404}),
    "/sources": ("analytics:read", {400}),
    "/sources/{ip}": ("analytics:read", {400, 404}),
    "/events": ("alert:read", {400}),
    "/api-keys/usage": ("integration:read", {400}),
    "/enums": ("analytics:read", set()),
}
RATE_LIMIT_HEADERS = {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
                      "RateLimit-Policy", "RateLimit"}
SAMPLE_PATH_VALUES = {"id": "01HZX3Q9V2K8M4N6P7R8S9T0VW", "domain": "example.com", "ip": "192.0.2.1"}


class SteppingClock:
    """One second per reading: generated traffic stays under the 50-requests-in-10-s abuse limit."""

    def __init__(self):
        self.start = utcnow()
        self.ticks = itertools.count()

    def __call__(self):
        return self.start + timedelta(seconds=next(self.ticks))


@pytest.fixture
def app(config):
    return create_app(config.replace(base_url="https://reports.example.net/api/v1"))


def served_paths(app) -> dict[str, str]:
    """Documented-style path ("/reports/{id}") -> endpoint, for every rule under the base path
    but the docs page's (a page for people that renders the document, not an API operation)."""
    out = {}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(BASE + "/") and not rule.endpoint.startswith("docs."):
            out[re.sub(r"<(?:[^<>:]+:)?([^<>]+)>", r"{\1}", rule.rule[len(BASE):])] = rule.endpoint
    return out


def concrete(path: str) -> str:
    return BASE + re.sub(r"{([^}]+)}", lambda m: SAMPLE_PATH_VALUES[m.group(1)], path)


def test_the_document_is_valid_openapi_3_1_labelled_v1():
    validate(DOC)
    assert DOC["openapi"].startswith("3.1.")
    assert DOC["info"]["version"] == "v1"


def test_the_document_describes_exactly_the_paths_of_the_contract():
    assert set(DOC["paths"]) - PUBLIC_PATHS == set(CONTRACT)


def test_every_api_route_the_app_serves_is_in_the_document(app):
    assert set(served_paths(app)) <= set(DOC["paths"])


@pytest.mark.parametrize("path", sorted(DOC["paths"]))
def test_every_documented_path_is_served_or_listed_as_not_yet_built(app, path):
    served = path in served_paths(app)
    assert served != (path in NOT_YET_BUILT), (
        f"{path} is served and still listed in NOT_YET_BUILT" if served else
        f"{path} is documented but not served; build it or list it in NOT_YET_BUILT")


def test_outside_the_base_path_the_app_serves_only_the_catalog_the_probes_and_the_pages(app):
    # The dashboard's pages (webapp/pages) are for people, not part of the API's contract.
    outside = {r.rule for r in app.url_map.iter_rules()
               if not r.rule.startswith(BASE + "/") and not r.endpoint.startswith("pages.")}
    assert outside == ROOT_ROUTES


@pytest.mark.parametrize("path", sorted(CONTRACT))
def test_each_operation_lists_the_error_statuses_the_contract_gives_it(path):
    statuses = {int(s) for s in DOC["paths"][path]["get"]["responses"] if s[0] in "45"}
    assert statuses == STANDARD | CONTRACT[path][1]


@pytest.mark.parametrize("path", sorted(CONTRACT))
def test_each_operation_names_its_permission_and_needs_the_bearer_key(path):
    operation = DOC["paths"][path]["get"]
    assert operation["x-permission"] == CONTRACT[path][0]
    assert "security" not in operation       # the document-wide bearer requirement applies
    assert DOC["security"] == [{"bearerAuth": []}]
    assert DOC["components"]["securitySchemes"]["bearerAuth"] == {
        **DOC["components"]["securitySchemes"]["bearerAuth"], "type": "http", "scheme": "bearer"}


@pytest.mark.parametrize("path", sorted(CONTRACT))
def test_each_success_declares_the_rate_limit_headers(path):
    assert set(DOC["paths"][path]["get"]["responses"]["200"]["headers"]) >= RATE_LIMIT_HEADERS


def test_the_view_checks_the_permission_the_document_names(app):
    served = served_paths(app)
    for path, (permission, _) in CONTRACT.items():
        if path in served:
            view = app.view_functions[served[path]]
            assert getattr(view, "permission", None) == permission, path


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_other_methods_on_documented_paths_are_405_with_allow_and_no_body(app, method):
    client = app.test_client()
    for path in sorted(set(served_paths(app)) & set(DOC["paths"])):
        response = client.open(concrete(path), method=method)
        assert response.status_code == 405, path
        assert response.headers["Allow"] == "GET, HEAD"
        assert response.data == b""


def test_the_openapi_document_is_served_without_a_key_naming_this_deployment(app):
    response = app.test_client().get(f"{BASE}/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    served = response.get_json()
    assert served["servers"] == [{"url": "https://reports.example.net/api/v1",
                                  "description": "This deployment (RUA_BASE_URL)."}]
    assert {**served, "servers": DOC["servers"]} == DOC


def test_the_openapi_document_answers_a_matching_etag_with_304(app):
    client = app.test_client()
    etag = client.get(f"{BASE}/openapi.json").headers["ETag"]
    response = client.get(f"{BASE}/openapi.json", headers={"If-None-Match": etag})
    assert response.status_code == 304 and response.data == b""


def test_the_api_catalog_is_an_rfc_9727_linkset_served_without_a_key(app):
    response = app.test_client().get("/.well-known/api-catalog")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == (
        'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"')
    assert response.headers["Link"] == '</.well-known/api-catalog>; rel="api-catalog"'
    catalog, api = json.loads(response.data)["linkset"]
    assert catalog == {"anchor": "https://reports.example.net/.well-known/api-catalog",
                       "item": [{"href": "https://reports.example.net/api/v1"}]}
    assert api["anchor"] == "https://reports.example.net/api/v1"
    assert api["service-desc"] == [{"href": "https://reports.example.net/api/v1/openapi.json",
                                    "type": "application/vnd.oai.openapi+json;version=3.1"}]
    assert api["service-doc"] == [{"href": "https://reports.example.net/api/v1/docs",
                                   "type": "text/html"}]


def test_the_catalog_link_leads_to_the_document(app):
    client = app.test_client()
    api = json.loads(client.get("/.well-known/api-catalog").data)["linkset"][1]
    desc = client.get(api["service-desc"][0]["href"].removeprefix("https://reports.example.net"))
    assert desc.status_code == 200 and desc.get_json()["info"]["version"] == "v1"
    assert client.get("/docs").status_code == 404


def test_head_on_the_catalog_gives_its_headers_without_a_body(app):
    response = app.test_client().head("/.well-known/api-catalog")
    assert response.status_code == 200 and response.data == b""
    assert response.headers["Link"] == '</.well-known/api-catalog>; rel="api-catalog"'


def schema_validator(name: str) -> Draft202012Validator:
    """A validator for one component schema of the document, its references resolved in it."""
    return Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                 "components": DOC["components"]})


@pytest.fixture
def corpus_org(config, database, corpus_dir):
    """A client and its key's headers, for an organization holding every corpus report."""
    from ingest.pipeline import ingest_paths
    org = make_org(plan="unlimited")
    _, key = make_key(org)
    # The corpus's many policy domains all become this org's: past the caps strangers meet.
    uncapped = config.replace(max_auto_domains=10_000, max_auto_domains_per_day=10_000)
    list(ingest_paths([str(corpus_dir / "aggregate")], config=uncapped, org=org))
    app = create_app(config, clock=SteppingClock())
    with store.db.obj.connection_context():
        yield app.test_client(), {"Authorization": f"Bearer {key}"}


@pytest.mark.slow   # the whole corpus ingested first: seconds on Postgres
def test_every_real_report_of_the_corpus_matches_the_documented_shapes(corpus_org):
    client, headers = corpus_org
    detail, summary = schema_validator("ReportDetail"), schema_validator("ReportList")
    ids = []
    for offset in (0, 200):
        page = client.get(f"{BASE}/reports?limit=200&offset={offset}", headers=headers).get_json()
        assert not [e.message for e in summary.iter_errors(page)]
        ids += [row["id"] for row in page["reports"]]
    assert len(ids) > 100
    for report_id in ids:
        response = client.get(f"{BASE}/reports/{report_id}", headers=headers)
        errors = [e.message for e in detail.iter_errors(response.get_json())]
        assert response.status_code == 200 and not errors, (report_id, errors[:3])


FIGURES = [("/dashboard/overview", "Overview"), ("/statistics", "Statistics"),
           ("/compliance-score", "ComplianceScore"), ("/compliance-score/history", "ScoreHistory"),
           ("/trends?days=365", "Trends"), ("/top-sources?limit=200", "TopSourceList"),
           ("/domains?limit=200", "DomainList"), ("/reports/date-range", "ReportDateRange"),
           ("/api-keys/usage", "Usage"), ("/enums", "Enums")]


@pytest.mark.slow   # the whole corpus ingested first: seconds on Postgres
def test_figures_and_health_over_the_corpus_match_the_documented_shapes(corpus_org):
    client, headers = corpus_org
    for path, schema in FIGURES:
        response = client.get(BASE + path, headers=headers)
        assert response.status_code == 200, path
        assert not [e.message for e in schema_validator(schema).iter_errors(response.get_json())], path
    domains = client.get(f"{BASE}/domains?limit=200", headers=headers).get_json()["domains"]
    health = schema_validator("DomainHealth")
    for entry in domains[:8]:
        response = client.get(f"{BASE}/domains/{entry['domain']}/health", headers=headers)
        assert response.status_code == 200, entry["domain"]
        assert not [e.message for e in health.iter_errors(response.get_json())], entry["domain"]


def test_the_readme_api_table_lists_every_path_of_the_contract():
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## The API", 1)[1].split("\n## ", 1)[0]
    listed = {p for line in section.splitlines() if line.startswith("| `/")
              for p in re.findall(r"`(/[^`]*)`", line.split("|")[1])}
    assert listed == set(CONTRACT)
