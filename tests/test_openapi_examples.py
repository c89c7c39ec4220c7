"""Every response example of webapp/openapi.json (the docs page shows them) is valid against the
schema it illustrates and has the fields the demo store's answer has today."""
from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from tests.openapi_examples import ERRORS, answers, json_get_paths
from tests.test_contract import DOC

PATHS = json_get_paths(DOC)


def validator(schema: dict) -> Draft202012Validator:
    return Draft202012Validator({**schema, "components": DOC["components"]})


def example_and_schema(path: str) -> tuple[object, dict]:
    content = DOC["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
    assert "example" in content, f"{path} has no example: run python -m tests.openapi_examples"
    return content["example"], content["schema"]


def test_every_json_operation_is_covered():
    assert len(PATHS) == 18


def test_the_document_has_an_example_of_itself_that_is_a_shortened_copy():
    example, _ = example_and_schema("/openapi.json")
    assert example["openapi"] == DOC["openapi"] and example["info"]["title"] == DOC["info"]["title"]
    assert set(example["paths"]) <= set(DOC["paths"])


@pytest.mark.parametrize("path", PATHS)
def test_the_example_is_valid_against_its_schema(path):
    example, schema = example_and_schema(path)
    assert not [e.message for e in validator(schema).iter_errors(example)]


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_the_error_examples_are_error_bodies(name):
    example = DOC["components"]["responses"][name]["content"]["application/json"]["example"]
    assert not [e.message for e in validator({"$ref": "#/components/schemas/Error"})
                .iter_errors(example)]
    assert f"`{example['code']}`" in DOC["components"]["schemas"]["Error"]["properties"]["code"][
        "description"]


def test_the_examples_have_the_fields_of_the_demo_stores_answers(rua, config):
    from tests.demo_api import demo_keys
    from webapp import create_app
    key = demo_keys(rua)[0]
    bodies, errors = answers(create_app(config).test_client(), key, DOC)
    for path, body in bodies.items():
        assert set(example_and_schema(path)[0]) == set(body), path
    for name, body in errors.items():
        assert DOC["components"]["responses"][name]["content"]["application/json"][
            "example"]["code"] == body["code"], name
