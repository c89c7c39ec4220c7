"""The two baselines bench/api.py measures rua's endpoints against, under the same gunicorn.

`bare` is the ceiling: a WSGI callable returning a constant 2 KB JSON body, no framework.
`flask_app()` answers the same bytes from a Flask route: the framework's own cost.
"""
import json

# Exactly 2 KB of JSON shaped like a page of report summaries.
_PAGE = {"reports": [{"id": f"01J00000000000000000000{i:03d}", "report_id": f"r-{i}",
                      "org_name": "google.com", "domain": "example.com",
                      "total_messages": 100 + i, "compliance_rate": 99.5} for i in range(12)],
         "total": 12, "limit": 50, "offset": 0, "note": ""}
_PAGE["note"] = "x" * (2048 - len(json.dumps(_PAGE, separators=(",", ":"))))
BODY = json.dumps(_PAGE, separators=(",", ":")).encode()
HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))]


def bare(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]


def flask_app():
    from flask import Flask, Response
    app = Flask("bench_constant")

    @app.get("/constant")
    def constant():
        return Response(BODY, mimetype="application/json")
    return app
