"""GET /enums: all ten categories, labels and severities, deliverable alert types."""
from __future__ import annotations

from rules.authenticity import AUTHENTICITIES
from store.event_types import EVENT_TYPES
from tests.webapp.helpers import get

CATEGORIES = {"verification_state", "alert_type", "alert_severity", "action_item_severity",
              "reputation_status", "dmarc_policy", "health_state", "grade", "tls_result_type",
              "authenticity"}
SEVERITIES = {"neutral", "success", "info", "warning", "critical"}


def _codes(body, category):
    return [e["code"] for e in body[category]]


def test_enums_names_all_ten_categories(client, key):
    resp = get(client, "/enums", key)
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    assert set(resp.get_json()) == CATEGORIES


def test_every_entry_has_a_code_a_label_and_a_known_severity(client, key):
    for entries in get(client, "/enums", key).get_json().values():
        assert entries
        for entry in entries:
            assert entry["code"] and entry["label"]
            assert entry.get("severity", "neutral") in SEVERITIES


def test_the_values_are_those_the_responses_use(client, key):
    body = get(client, "/enums", key).get_json()
    assert _codes(body, "verification_state") == ["pending", "verified", "verified_inherited",
                                                  "not_published", "published_not_ours",
                                                  "multiple_records", "unconfirmed"]
    assert _codes(body, "alert_severity") == ["info", "warning", "critical"]
    assert _codes(body, "action_item_severity") == ["low", "medium", "high"]
    assert _codes(body, "reputation_status") == ["clean", "suspicious", "malicious", "unknown"]
    assert _codes(body, "dmarc_policy") == ["none", "quarantine", "reject"]
    assert _codes(body, "health_state") == ["nodata", "secure", "warning", "critical"]
    assert _codes(body, "tls_result_type")[:3] == ["starttls-not-supported",
                                                   "certificate-host-mismatch",
                                                   "certificate-expired"]
    assert len(_codes(body, "tls_result_type")) == 11
    assert _codes(body, "grade") == ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F", "N/A"]


def test_alert_types_are_the_type_tables_and_say_which_can_be_pushed(client, key):
    body = get(client, "/enums", key).get_json()
    assert body["alert_type"] == [{"code": t.code, "label": t.label, "severity": t.severity,
                                   "deliverable": t.deliverable} for t in EVENT_TYPES]


def test_authenticity_lists_every_value_reports_carry(client, key):
    assert _codes(get(client, "/enums", key).get_json(), "authenticity") == list(AUTHENTICITIES)
