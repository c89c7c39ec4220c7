"""The IMAP login's refusals: one line, with the password masked however the server echoes it."""
from __future__ import annotations

import pytest
import trustme

from tests.cli.outcome import assert_refused
from tests.intake.echoing_imap import EchoingImap


@pytest.mark.parametrize("bye", [False, True], ids=["NO", "BYE"])
def test_a_server_that_echoes_the_login_never_gets_the_password_shown(rua, acme, tmp_path,
                                                                     monkeypatch, bye):
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    (tmp_path / "password").write_text("pa55 w0rd\n")
    server = EchoingImap(ca, bye=bye).start()
    where = f"127.0.0.1:{server.port}"
    for name, value in {"RUA_IMAP_URL": f"imaps://dmarc@{where}/INBOX",
                        "RUA_IMAP_PASSWORD_FILE": str(tmp_path / "password"),
                        "RUA_IMAP_CA_FILE": str(tmp_path / "ca.pem")}.items():
        monkeypatch.setenv(name, value)
    try:
        result = rua("fetch", "imap")
    finally:
        server.stop()
    assert_refused(result, where, "LOGIN dmarc ", "(***)")
    assert "pa55" not in result.stderr and "w0rd" not in result.stderr

