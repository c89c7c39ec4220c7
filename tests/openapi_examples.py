"""The response examples of webapp/openapi.json, taken from the demo store's real answers.

`python -m tests.openapi_examples` loads a fresh demo store (`rua demo`), asks the in-process app
every documented GET and writes each 200 body (arrays cut to two items) into the document as the
operation's example, plus one real 401, 400 and 404 body. tests/test_openapi_examples.py keeps
every example valid against the schema it illustrates.
"""
from __future__ import annotations

import json
import pathlib
import re
import tempfile

BASE = "/api/v1"
DOCUMENT = pathlib.Path(__file__).resolve().parents[1] / "webapp" / "openapi.json"
SHOWN = 2            # items kept of every array
ERRORS = {"Unauthorized": ("/enums", "rua_" + "0" * 40),
          "BadRequest": ("/reports?from=2024-02-30", None),
          "NotFound": ("/reports/01HZX3Q9V2K8M4N6P7R8S9T0VW", None)}


def trimmed(value):
    """value with every array cut to its first SHOWN items, at every depth."""
    if isinstance(value, list):
        return [trimmed(item) for item in value[:SHOWN]]
    if isinstance(value, dict):
        return {name: trimmed(item) for name, item in value.items()}
    return value


def json_get_paths(doc: dict) -> list[str]:
    """Every documented path with a JSON answer to GET, but the document itself."""
    return [path for path, item in doc["paths"].items()
            if "get" in item and path != "/openapi.json"
            and "application/json" in item["get"]["responses"]["200"].get("content", {})]


def answers(client, key: str, doc: dict) -> tuple[dict, dict]:
    """({path: 200 body}, {error response name: body}) from the app behind client."""

    def get(url, with_key=key):
        response = client.get(BASE + url, headers={"Authorization": f"Bearer {with_key}"})
        return response.status_code, response.get_json()

    values = {"id": get("/reports?limit=1")[1]["reports"][0]["id"], "domain": "example.com",
              "ip": get("/sources?limit=1")[1]["sources"][0]["source_ip"],
              "tls": get("/tls-reports?limit=1")[1]["tls_reports"][0]["id"]}
    bodies = {}
    for path in json_get_paths(doc):
        named = path.replace("/tls-reports/{id}", "/tls-reports/{tls}")
        status, body = get(re.sub(r"{(\w+)}", lambda m: values[m.group(1)], named))
        assert status == 200, (path, status, body)
        bodies[path] = body
    errors = {name: get(url, other or key)[1] for name, (url, other) in ERRORS.items()}
    return bodies, errors


def write(doc: dict, bodies: dict, errors: dict) -> None:
    for path, body in bodies.items():
        doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"][
            "example"] = trimmed(body)
    for name, body in errors.items():
        doc["components"]["responses"][name]["content"]["application/json"]["example"] = body
    DOCUMENT.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    from click.testing import CliRunner

    import store
    from cli import main as rua
    from config import Config
    from webapp import create_app
    with tempfile.TemporaryDirectory(prefix="rua-examples-") as folder:
        url = f"sqlite:///{folder}/rua.db"
        result = CliRunner().invoke(rua, ["demo", "--days", "30"],
                                    env={"RUA_DATABASE_URL": url, "RUA_LOCK_DIR": folder})
        assert result.exit_code == 0, result.output
        key = result.stdout.splitlines()[-1]
        app = create_app(Config(database_url=url, offline=True, lock_dir=folder))
        doc = json.loads(DOCUMENT.read_text(encoding="utf-8"))
        with store.db.obj.connection_context():
            write(doc, *answers(app.test_client(), key, doc))


if __name__ == "__main__":
    main()
