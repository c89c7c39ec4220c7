"""GET /enums: every enumeration a response uses, with display labels and severities."""
from __future__ import annotations

from flask import Blueprint, Response

from ingest.tls_report import RESULT_TYPES
from rules import authenticity
from store.event_types import EVENT_TYPES
from store.encoding import dumps
from webapp.auth import requires

bp = Blueprint("enums", __name__)

# (code, label, severity or None)
_CATEGORIES = {
    "verification_state": [
        ("pending", "Pending first check", "neutral"),
        ("verified", "Verified", "success"),
        ("verified_inherited", "Verified through parent domain", "success"),
        ("not_published", "Not published", "critical"),
        ("published_not_ours", "Published, reporting elsewhere", "warning"),
        ("multiple_records", "Multiple records", "critical"),
        ("unconfirmed", "Could not be confirmed", "info"),
    ],
    "alert_severity": [
        ("info", "Info", "info"),
        ("warning", "Warning", "warning"),
        ("critical", "Critical", "critical"),
    ],
    "action_item_severity": [
        ("low", "Low", "info"),
        ("medium", "Medium", "warning"),
        ("high", "High", "critical"),
    ],
    "reputation_status": [
        ("clean", "Clean", "success"),
        ("suspicious", "Suspicious", "warning"),
        ("malicious", "Malicious", "critical"),
        ("unknown", "Unknown", "neutral"),
    ],
    "dmarc_policy": [
        ("none", "None (monitor only)", "warning"),
        ("quarantine", "Quarantine", "info"),
        ("reject", "Reject", "success"),
    ],
    "health_state": [
        ("nodata", "No data yet", "neutral"),
        ("secure", "Secure", "success"),
        ("warning", "Needs attention", "warning"),
        ("critical", "Critical", "critical"),
    ],
    "authenticity": [
        (authenticity.VERIFIED, "Signed by its sender", "success"),
        (authenticity.OTHER_SIGNER, "Signed by another domain", "info"),
        (authenticity.FAILED, "Signature does not verify", "critical"),
        (authenticity.UNSIGNED, "Unsigned", "warning"),
        (authenticity.UNCHECKED, "Not checked", "neutral"),
    ],
    "grade": [(g, g, s) for g, s in (
        ("A+", "success"), ("A", "success"), ("A-", "success"),
        ("B+", "info"), ("B", "info"), ("B-", "info"),
        ("C+", "warning"), ("C", "warning"), ("C-", "warning"),
        ("D", "critical"), ("F", "critical"), ("N/A", "neutral"))],
}


def catalog() -> dict:
    """The /enums document: category → [{code, label, severity?, deliverable?}]."""
    doc = {name: [{"code": c, "label": l, "severity": s} for c, l, s in entries]
           for name, entries in _CATEGORIES.items()}
    doc["tls_result_type"] = [{"code": c, "label": label, "severity": "warning"}
                              for c, (label, _) in RESULT_TYPES.items()]
    doc["alert_type"] = [{"code": t.code, "label": t.label, "severity": t.severity,
                          "deliverable": t.deliverable} for t in EVENT_TYPES]
    return doc


LABELS = {name: {e["code"]: e["label"] for e in entries} for name, entries in catalog().items()}
_BODY = dumps(catalog())     # static: printed once, served as bytes


@bp.get("/enums")
@requires("analytics:read")
def index():
    return Response(_BODY, mimetype="application/json")
