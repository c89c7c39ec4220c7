"""{base}/docs: Swagger UI over openapi.json from packaged files, no key, a strict CSP, and served
with openapi.json and the API catalog even when the store cannot be reached."""
from __future__ import annotations

import json
import pathlib

import pytest

from config import Config
from webapp import create_app
from webapp.docs import POLICY, SERVED

BASE = "/api/v1"
# The operations a path item of OpenAPI 3.1 may hold (its other keys describe the path).
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
PUBLIC = (f"{BASE}/docs", f"{BASE}/docs/init.js", f"{BASE}/openapi.json",
          "/.well-known/api-catalog", *(f"{BASE}/docs/assets/{name}" for name in SERVED))


def test_the_page_and_its_files_need_no_key_and_carry_the_policy(client):
    for path in PUBLIC[:2] + PUBLIC[4:]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["Content-Security-Policy"] == POLICY
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    page = client.get(f"{BASE}/docs").get_data(as_text=True)
    # Every script is a file of this origin: the policy has no 'unsafe-inline' to allow more.
    assert "<script>" not in page and "'unsafe-inline'" not in POLICY
    assert 'src="docs/assets/swagger-ui-bundle.js"' in page and 'src="docs/init.js"' in page


def test_only_the_files_the_page_uses_are_served(client):
    for name in ("swagger-ui.js", "index.css", "..%2Fdocs.py", "oauth2-redirect.html"):
        response = client.get(f"{BASE}/docs/assets/{name}")
        assert response.status_code == 404, name
        assert response.get_json()["code"] == "route_not_found"


def test_a_page_unchanged_is_answered_304(client):
    etag = client.get(f"{BASE}/docs").headers["ETag"]
    assert client.get(f"{BASE}/docs", headers={"If-None-Match": etag}).status_code == 304


def test_the_catalog_links_the_docs_page(client):
    api = client.get("/.well-known/api-catalog").get_json()["linkset"][1]
    assert api["service-doc"] == [{"href": "http://127.0.0.1:8000/api/v1/docs",
                                   "type": "text/html"}]


@pytest.mark.parametrize("url", ["postgresql://nobody@127.0.0.1:1/none",
                                 "sqlite:////nonexistent-folder/rua.db"])
def test_docs_description_and_catalog_are_served_when_the_store_is_down(url, tmp_path):
    client = create_app(Config(database_url=url, offline=True,
                               lock_dir=str(tmp_path))).test_client()
    for path in PUBLIC:
        assert client.get(path).status_code == 200, path
    # An API call still reports the store, so the check above is not a store that is up.
    answer = client.get(f"{BASE}/enums", headers={"Authorization": "Bearer rua_" + "0" * 40})
    assert (answer.status_code, answer.get_json()["code"]) == (503, "storage_unavailable")


def test_each_operation_is_listed_once_and_head_is_one_sentence_of_the_description():
    """HEAD answers like GET on every path (tests/webapp/test_endpoints.py); the document says
    so once instead of listing a twin operation for each GET."""
    document = json.loads((pathlib.Path(__file__).resolve().parents[2] / "webapp" /
                           "openapi.json").read_text())
    methods = {method for item in document["paths"].values() for method in item
               if method in HTTP_METHODS}
    assert methods == {"get"}
    sentences = [line for line in document["info"]["description"].split("\n* ") if "`HEAD`" in line]
    assert len(sentences) == 1 and "without a body" in sentences[0]
