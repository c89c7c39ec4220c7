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


def metered_app(config=None, clock=None):
    """The least an exactly metered route costs: one Flask route after rua's own before-request
    step (webapp/request_checks.py: the worker's connection kept as webapp/connections.py keeps
    it, the bearer key resolved by webapp.auth's Authenticator, the request metered by
    webapp.quota through store.usage's one upsert), rua's error answers and quota headers;
    then the same constant body. Quotas exact across hosts need a store round trip a request."""
    import os

    from flask import Flask, Response

    import store
    from config import Config
    from store.clock import utcnow
    from webapp import connections, errors, quota, request_checks
    from webapp.auth import Authenticator, requires
    config = config if config is not None else Config.from_env(os.environ)
    app = Flask("bench_metered")
    app.config.update(RUA=config, RUA_CLOCK=clock or utcnow)
    app.extensions["rua.auth"] = Authenticator()
    errors.register(app)
    connections.register(app, store.open_db(config.database_url))
    app.before_request(request_checks.check_request)
    app.after_request(quota.add_headers)

    @app.get("/constant")
    @requires("report:read")
    def constant():
        return Response(BODY, mimetype="application/json")
    return app
