"""A Python client generated from webapp/openapi.json by openapi-python-client (default settings)
calls every operation against gunicorn on the demo store, and its typed models parse every
answer. A generation warning, an unexpected status or a field the models do not know fails."""
from __future__ import annotations

import importlib
import inspect
import os
import pathlib
import pkgutil
import subprocess
import sys

import pytest

from tests.demo_api import demo_keys, served_demo, unmetered_demo
from tests.test_contract import DOC

DOCUMENT = pathlib.Path(__file__).resolve().parents[2] / "webapp" / "openapi.json"
BIN = pathlib.Path(sys.executable).parent
PACKAGE = "rua_dmarc_aggregate_report_api_client"


def generate(folder: pathlib.Path) -> None:
    """openapi-python-client generate, its ruff post-hooks found beside it."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run([str(BIN / "openapi-python-client"), "generate", "--path",
                          str(DOCUMENT)], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "Warning" not in out and "Error" not in out, out


def operations(package) -> dict[str, object]:
    """{operation module name: module} of every operation of the generated client."""
    api = importlib.import_module(f"{package.__name__}.api")
    found = {}
    for tag in pkgutil.iter_modules(api.__path__):
        group = importlib.import_module(f"{api.__name__}.{tag.name}")
        for module in pkgutil.iter_modules(group.__path__):
            found[module.name] = importlib.import_module(f"{group.__name__}.{module.name}")
    return found


def unknown_fields(value, where: str = "") -> list[str]:
    """Fields of the answer that no model declares (kept in additional_properties)."""
    if isinstance(value, list):
        return [f for i, item in enumerate(value) for f in unknown_fields(item, f"{where}[{i}]")]
    if not hasattr(value, "additional_properties"):
        return []
    found = [f"{where}.{name}" for name in value.additional_properties]
    for field in type(value).__attrs_attrs__:
        if field.name != "additional_properties":
            found += unknown_fields(getattr(value, field.name), f"{where}.{field.name}")
    return found


@pytest.mark.slow
def test_the_generated_client_parses_every_answer_of_every_operation(rua, config, tmp_path,
                                                                       monkeypatch):
    generate(tmp_path)
    monkeypatch.syspath_prepend(str(next(tmp_path.glob("*-client"))))
    client_package = importlib.import_module(PACKAGE)
    from rua_dmarc_aggregate_report_api_client.types import Unset
    ops = operations(client_package)
    ids = {item["get"]["operationId"] for item in DOC["paths"].values()}
    assert {name.replace("_", "") for name in ops} == {i.lower() for i in ids}

    key = demo_keys(rua)[0]
    unmetered_demo()
    with served_demo(config, tmp_path) as base:
        client = client_package.AuthenticatedClient(base_url=base, token=key,
                                                    raise_on_unexpected_status=True)
        reports = ops["list_reports"].sync(client=client)
        sources = ops["list_sources"].sync(client=client)
        tls = ops["list_tls_reports"].sync(client=client)
        values = {"id": reports.reports[0].id, "ip": sources.sources[0].source_ip,
                  "domain": "example.com"}
        for name, module in sorted(ops.items()):
            wanted = inspect.signature(module.sync_detailed).parameters
            given = {**values, "id": tls.tls_reports[0].id} if "tls_report" in name else values
            answer = module.sync_detailed(client=client,
                                          **{k: v for k, v in given.items() if k in wanted})
            assert answer.status_code == 200, (name, answer.status_code, answer.content[:300])
            parsed = answer.parsed
            assert parsed is not None and not isinstance(parsed, Unset), name
            assert type(parsed).__module__.startswith(f"{PACKAGE}.models"), (name, type(parsed))
            if name != "get_open_api_document":      # the document is a free-form object
                assert not unknown_fields(parsed), (name, unknown_fields(parsed))
