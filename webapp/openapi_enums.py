"""The enumerations of webapp/openapi.json that the code's registries hold (the /enums
catalog: event types, severities, grades, policies, states, TLS result types, authenticity),
written into the document from them: `python -m webapp.openapi_enums` after a registry changes.
tests/webapp/test_openapi_enums.py fails while the document and the registries differ."""
from __future__ import annotations

import json
import sys

from webapp.enums import catalog
from webapp.openapi import DOCUMENT

# Where each enumeration stands in the document (a JSON pointer) -> its /enums category.
ENUMERATIONS = {
    "/components/schemas/Event/properties/type": "alert_type",
    "/components/schemas/Event/properties/severity": "alert_severity",
    "/components/schemas/Grade": "grade",
    "/components/schemas/Policy": "dmarc_policy",
    "/components/schemas/VerificationState": "verification_state",
    "/components/schemas/ActionItemSeverity": "action_item_severity",
    "/components/schemas/ReputationStatus": "reputation_status",
    "/components/schemas/Overview/properties/org_health/properties/health_state": "health_state",
    "/components/schemas/TlsResultType/anyOf/0": "tls_result_type",
    "/components/schemas/Authenticity": "authenticity",
}


def at(document: dict, pointer: str) -> dict:
    node = document
    for part in pointer.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def with_registries(document: dict) -> dict:
    """The document with each enumeration of ENUMERATIONS set to its category's codes."""
    categories = catalog()
    for pointer, category in ENUMERATIONS.items():
        at(document, pointer)["enum"] = [entry["code"] for entry in categories[category]]
    return document


def text(document: dict) -> str:
    """The document as the file holds it."""
    return json.dumps(document, indent=2) + "\n"


def main() -> int:
    current = DOCUMENT.read_text(encoding="utf-8")
    written = text(with_registries(json.loads(current)))
    if written != current:
        DOCUMENT.write_text(written, encoding="utf-8")
    print(f"{DOCUMENT}: {'enumerations written' if written != current else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
