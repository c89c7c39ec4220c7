"""The document's enumerations are the registries' codes (`python -m webapp.openapi_enums`
writes them), and every /enums category stands somewhere in the document."""
import json

from store.event_types import EVENT_TYPES
from webapp import openapi_enums
from webapp.enums import catalog
from webapp.openapi import DOCUMENT


def test_the_document_holds_the_enumerations_the_registries_give():
    current = DOCUMENT.read_text(encoding="utf-8")
    assert openapi_enums.text(openapi_enums.with_registries(json.loads(current))) == current, (
        "run `python -m webapp.openapi_enums`")


def test_every_event_type_is_in_the_events_type_enumeration():
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    codes = [event_type.code for event_type in EVENT_TYPES]
    assert openapi_enums.at(document, "/components/schemas/Event/properties/type")["enum"] == codes


def test_every_category_of_enums_has_its_place_in_the_document():
    assert sorted(openapi_enums.ENUMERATIONS.values()) == sorted(catalog())


def test_grades_keep_one_generated_name_each():
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    grade = openapi_enums.at(document, "/components/schemas/Grade")
    assert len(grade["x-enum-varnames"]) == len(grade["enum"])


def test_a_registry_code_missing_from_the_document_is_written_in():
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    openapi_enums.at(document, "/components/schemas/Event/properties/type")["enum"].remove(
        "tls_failures")
    written = openapi_enums.with_registries(document)
    assert "tls_failures" in openapi_enums.at(
        written, "/components/schemas/Event/properties/type")["enum"]
