"""A real Dovecot IMAP server for the intake tests: 127.0.0.1, a throwaway config, trustme TLS."""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

from tests.servers import children, free_port

USER, PASSWORD = "dmarc", "s3cret-for-tests"
START_TIMEOUT = 20

CONFIG = """\
protocols = imap
listen = 127.0.0.1
base_dir = {run}/base
state_dir = {run}/state
log_path = {run}/dovecot.log
default_internal_user = {internal}
default_internal_group = {internal_group}
default_login_user = {login}
first_valid_uid = {uid}
last_valid_uid = 0
ssl = required
ssl_cert = <{cert}
ssl_key = <{key}
auth_mechanisms = plain{mechanisms}
mail_location = maildir:~/Maildir
mail_max_userip_connections = 100
# The imap processes' titles show the command each session runs (IDLE): tests wait on it.
verbose_proctitle = yes
{capabilities}
namespace inbox {{
  inbox = yes
  separator = /
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {run}/passwd
}}
{oauth2_passdb}userdb {{
  driver = static
  args = uid={uid} gid={gid} home={mail}/%u
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap_port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {imaps_port}
    ssl = yes
  }}
}}
"""


# Tokens are checked by POSTing them to a test's introspection endpoint (RFC 7662).
OAUTH2_PASSDB = """\
passdb {{
  driver = oauth2
  mechanisms = {mechanisms}
  args = {run}/etc/oauth2.conf.ext
}}
"""
OAUTH2_CONF = """\
introspection_mode = post
introspection_url = {url}
force_introspection = yes
username_attribute = username
active_attribute = active
active_value = true
tls_ca_cert_file = {ca}
timeout_msecs = 10000
"""


@dataclass
class Dovecot:
    """A running server: its ports, the CA that signed its certificate, and its processes."""
    imaps_port: int
    imap_port: int
    ca_file: str
    process: subprocess.Popen
    run_dir: str

    def url(self, folder: str = "INBOX", starttls: bool = False) -> str:
        if starttls:
            return f"imap://{USER}@127.0.0.1:{self.imap_port}/{folder}"
        return f"imaps://{USER}@127.0.0.1:{self.imaps_port}/{folder}"

    def kill_sessions(self) -> int:
        """SIGKILL every logged-in imap process: each client's connection drops at once."""
        titles = self._imap_titles()
        for pid in titles:
            os.kill(pid, signal.SIGKILL)
        return len(titles)

    def wait_for_idle(self, sessions: int = 1, timeout: float = 20) -> bool:
        """Whether `sessions` imap processes are in IDLE (their titles say so) within timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sum(b"IDLE" in title for title in self._imap_titles().values()) >= sessions:
                return True
            time.sleep(0.02)
        return False

    def _imap_titles(self) -> dict[int, bytes]:
        titles = {}
        for pid in children(self.process.pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as stream:
                    title = stream.read()
            except OSError:
                continue
            command = title.split(b"\0")[0].split(b" ")[0]
            if command.endswith(b"dovecot/imap") or command == b"imap":
                titles[pid] = title
        return titles

    def log(self) -> str:
        try:
            with open(os.path.join(self.run_dir, "dovecot.log"), encoding="utf-8",
                      errors="replace") as stream:
                return stream.read()
        except OSError:
            return ""


def start(ca, *, without: tuple[str, ...] = (), introspection_url: str = "",
          oauth_mechanisms: tuple[str, ...] = ("xoauth2", "oauthbearer")) -> Dovecot:
    """Start dovecot (a RuntimeError says why it cannot); `without` drops capabilities;
    `introspection_url` adds the oauth2 passdb for `oauth_mechanisms`, checking tokens there."""
    binary = shutil.which("dovecot") or ("/usr/sbin/dovecot"
                                         if os.path.exists("/usr/sbin/dovecot") else None)
    if binary is None:
        raise RuntimeError("dovecot is not installed (Debian: apt-get install dovecot-imapd)")
    run = tempfile.mkdtemp(prefix="rua-dovecot-")
    os.chmod(run, 0o755)         # login processes run as another user and need to reach it
    mail = os.path.join(run, "mail")
    for folder in ("state", "base", "etc"):
        os.makedirs(os.path.join(run, folder))
    os.chmod(os.path.join(run, "base"), 0o755)
    os.makedirs(mail)
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_and_cert_chain_pem.write_to_path(os.path.join(run, "server.pem"))
    ca.cert_pem.write_to_path(os.path.join(run, "ca.pem"))
    users = _users()
    os.chown(mail, users["uid"], users["gid"])
    with open(os.path.join(run, "passwd"), "w") as stream:
        stream.write(f"{USER}:{{PLAIN}}{PASSWORD}::::::\n")
    imaps_port, imap_port = free_port(), free_port()
    mechanisms, oauth2_passdb = "", ""
    if introspection_url:
        mechanisms = "".join(f" {m}" for m in oauth_mechanisms)
        oauth2_passdb = OAUTH2_PASSDB.format(mechanisms=" ".join(oauth_mechanisms), run=run)
        with open(os.path.join(run, "etc", "oauth2.conf.ext"), "w") as stream:
            stream.write(OAUTH2_CONF.format(url=introspection_url,
                                            ca=os.path.join(run, "ca.pem")))
    # Not in base_dir: dovecot makes base_dir/dovecot.conf a link to the config it was given.
    conf = os.path.join(run, "etc", "dovecot.conf")
    with open(conf, "w") as stream:
        stream.write(CONFIG.format(run=run, mail=mail, cert=os.path.join(run, "server.pem"),
                                   key=os.path.join(run, "server.pem"), imaps_port=imaps_port,
                                   imap_port=imap_port, capabilities=_capabilities(without),
                                   mechanisms=mechanisms, oauth2_passdb=oauth2_passdb, **users))
    process = subprocess.Popen([binary, "-F", "-c", conf], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    server = Dovecot(imaps_port, imap_port, os.path.join(run, "ca.pem"), process, run)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read().decode(errors="replace").strip()
            stop(server)
            raise RuntimeError(f"dovecot exited at start: {output or server.log()}"[:500])
        try:
            with socket.create_connection(("127.0.0.1", imaps_port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.05)
    stop(server)
    raise RuntimeError("dovecot did not start listening in time")


def stop(server: Dovecot) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    server.process.stdout.close()
    shutil.rmtree(server.run_dir, ignore_errors=True)


def _users() -> dict:
    """As root, Dovecot's own users and `nobody` for mail; otherwise everything as ourselves."""
    if os.getuid() == 0:
        nobody = pwd.getpwnam("nobody")
        return {"internal": "dovecot", "internal_group": "dovecot", "login": "dovenull",
                "uid": nobody.pw_uid, "gid": nobody.pw_gid}
    me = pwd.getpwuid(os.getuid())
    group = __import__("grp").getgrgid(os.getgid()).gr_name
    return {"internal": me.pw_name, "internal_group": group, "login": me.pw_name,
            "uid": me.pw_uid, "gid": os.getgid()}


def _capabilities(without: tuple[str, ...]) -> str:
    if not without:
        return ""
    # Dovecot 2.3's post-login capability list, less the ones a test wants the server to lack.
    full = ("IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT SORT=DISPLAY THREAD=REFERENCES "
            "THREAD=REFS THREAD=ORDEREDSUBJECT MULTIAPPEND URL-PARTIAL CATENATE UNSELECT "
            "CHILDREN NAMESPACE UIDPLUS LIST-EXTENDED I18NLEVEL=1 CONDSTORE QRESYNC ESEARCH "
            "ESORT SEARCHRES WITHIN CONTEXT=SEARCH LIST-STATUS BINARY MOVE SNIPPET=FUZZY "
            "PREVIEW=FUZZY LITERAL+ NOTIFY SPECIAL-USE")
    return "imap_capability = " + " ".join(c for c in full.split() if c not in without)
