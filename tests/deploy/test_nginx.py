"""deploy/nginx.conf.example in a running nginx in front of a running gunicorn (RUA_PROXIES=1).

The example is turned into a throwaway config by replacing only what is specific to a host
(ports, certificate paths, the upstream's port, log paths), each replacement checked to apply.
"""
from __future__ import annotations

import http.client
import json
import os
import pathlib
import shutil
import ssl
import subprocess

import pytest
import trustme

from tests.servers import free_port, running_gunicorn, wait_until_listening

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "nginx.conf.example"
# The client connects from another loopback address than nginx's own hop to gunicorn
# (127.0.0.1), so the address the app sees tells the two apart.
CLIENT = "127.0.0.2"
# nginx listens on a loopback address of its own: a port found free on 127.0.0.1 can be taken
# by another suite's server before nginx binds it, and the test would then talk to that one.
NGINX = "127.0.0.80"
HOST = "reports.example.net"

MAIN = """\
{user}
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 64; }}
http {{
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {tmp}/rua.conf;
}}
"""


def nginx_binary() -> str:
    found = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if found is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx)")
    return found


def replace(text: str, old: str, new: str) -> str:
    assert old in text, f"deploy/nginx.conf.example no longer has {old!r}"
    return text.replace(old, new)


def site(tmp: pathlib.Path, http_port: int, https_port: int, upstream: int, cert) -> str:
    text = EXAMPLE.read_text()
    text = replace(text, "    listen [::]:80;\n", "")
    text = replace(text, "    listen [::]:443 ssl http2;\n", "")
    text = replace(text, "listen 80;", f"listen {NGINX}:{http_port};")
    text = replace(text, "listen 443 ssl http2;", f"listen {NGINX}:{https_port} ssl http2;")
    text = replace(text, "server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};")
    text = replace(text, f"/etc/letsencrypt/live/{HOST}/fullchain.pem", str(cert["chain"]))
    text = replace(text, f"/etc/letsencrypt/live/{HOST}/privkey.pem", str(cert["key"]))
    return replace(text, "/var/log/nginx/rua.access.log", str(tmp / "access.log"))


@pytest.fixture
def proxy(database, config, tmp_path):
    """gunicorn (RUA_PROXIES=1) behind nginx from the example: (https port, http port, CA)."""
    binary = nginx_binary()
    ca = trustme.CA()
    issued = ca.issue_cert(HOST, NGINX)
    cert = {"chain": tmp_path / "chain.pem", "key": tmp_path / "key.pem"}
    issued.cert_chain_pems[0].write_to_path(str(cert["chain"]))
    for extra in issued.cert_chain_pems[1:]:
        extra.write_to_path(str(cert["chain"]), append=True)
    issued.private_key_pem.write_to_path(str(cert["key"]))
    http_port, https_port = free_port(NGINX), free_port(NGINX)
    with running_gunicorn(config, tmp_path / "gunicorn.log", "tests.deploy.proxied_app:app",
                          RUA_PROXIES="1", RUA_BASE_URL=f"https://{HOST}/api/v1",
                          RUA_METRICS="1") as (base, _):
        upstream = int(base.split(":")[2].split("/")[0])
        (tmp_path / "rua.conf").write_text(site(tmp_path, http_port, https_port, upstream, cert))
        # As root, workers would run as nobody, who cannot reach pytest's 0700 folders.
        user = "user root;" if os.getuid() == 0 else ""
        (tmp_path / "nginx.conf").write_text(MAIN.format(tmp=tmp_path, user=user))
        command = [binary, "-e", str(tmp_path / "startup.log"), "-p", str(tmp_path),
                   "-c", str(tmp_path / "nginx.conf")]
        checked = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, checked.stderr
        assert "syntax is ok" in checked.stderr and "test is successful" in checked.stderr
        process = subprocess.Popen([*command, "-g", "daemon off;"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        try:
            wait_until_listening(process, https_port, name="nginx", host=NGINX,
                                 output=lambda: process.stdout.read().decode(errors="replace"))
            yield https_port, http_port, ca
        finally:
            process.terminate()
            process.wait(timeout=10)
            process.stdout.close()


def get(port: int, path: str, ca=None, **headers) -> tuple[int, dict, bytes]:
    """A request from CLIENT over TLS (ca given) or plain HTTP, with Host: reports.example.net."""
    if ca is not None:
        context = ssl.create_default_context()
        ca.configure_trust(context)
        connection = http.client.HTTPSConnection(NGINX, port, timeout=10, context=context,
                                                 source_address=(CLIENT, 0))
    else:
        connection = http.client.HTTPConnection(NGINX, port, timeout=10,
                                                source_address=(CLIENT, 0))
    try:
        connection.request("GET", path, headers={"Host": HOST, **headers})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def seen_through(port: int) -> dict:
    """What the app must see of a client of nginx: its address, https, the public host (with
    the port it connected to, as nginx here listens on a free port rather than 443)."""
    return {"remote_addr": CLIENT, "scheme": "https", "host": f"{HOST}:{port}",
            "url_root": f"https://{HOST}:{port}/"}


def test_the_clients_address_and_scheme_reach_the_app(proxy):
    https_port, _, ca = proxy
    status, _, body = get(https_port, "/_seen", ca)
    assert status == 200, body
    assert json.loads(body) == seen_through(https_port)


def test_forwarded_headers_sent_from_outside_are_not_believed(proxy):
    https_port, _, ca = proxy
    status, _, body = get(https_port, "/_seen", ca, **{
        "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "http",
        "X-Forwarded-Host": "evil.example", "X-Forwarded-Port": "8443",
        "X-Forwarded-Prefix": "/evil"})
    assert status == 200, body
    assert json.loads(body) == seen_through(https_port)


def test_the_api_answers_through_nginx_and_plain_http_is_sent_to_https(proxy):
    https_port, http_port, ca = proxy
    status, headers, body = get(https_port, "/api/v1/openapi.json", ca)
    assert status == 200 and json.loads(body)["openapi"].startswith("3.")
    status, headers, _ = get(http_port, "/api/v1/openapi.json?x=1")
    assert status == 301 and headers["Location"] == f"https://{HOST}/api/v1/openapi.json?x=1"
    status, _, body = get(https_port, "/api/v1/reports", ca)
    assert status == 401, body           # the key check is the app's, not nginx's


def test_metrics_are_not_served_through_the_public_proxy(proxy):
    https_port, _, ca = proxy
    status, _, body = get(https_port, "/metrics", ca)
    assert status == 404 and b"route_not_found" not in body     # nginx's answer, not the app's
