"""rua's app as wsgi.py builds it, plus one route that shows what the app sees of its client.

For tests/deploy/test_nginx.py only: the API itself never shows the client's address or scheme,
so this route (outside the API's path, needing no key) answers them as Flask computed them.
"""
from flask import jsonify, request

from webapp.request_checks import public
from wsgi import app


@public
def seen():
    return jsonify(remote_addr=request.remote_addr, scheme=request.scheme, host=request.host,
                   url_root=request.url_root)


app.add_url_rule("/_seen", "seen", seen)
