"""One Dovecot for the session; each test reads and files in folders of its own."""
from __future__ import annotations

import contextlib
import itertools
import os
import pathlib
import sqlite3
import ssl
import subprocess
import sys
import threading
import time

import psycopg2
import pytest
import trustme
from imapclient import IMAPClient

from tests.factories import make_domain, make_org
from tests.intake import dovecot
from tests.ingest import xmlbuild

_folders = itertools.count(1)
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _server(request, **options):
    try:
        server = dovecot.start(trustme.CA(), **options)
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"no IMAP server for the intake tests: {exc}")
    request.addfinalizer(lambda: dovecot.stop(server))
    return server


@pytest.fixture(scope="session")
def imap_server(request):
    """Debian's Dovecot on 127.0.0.1 with a trustme certificate; the tests skip without it."""
    return _server(request)


@pytest.fixture(scope="session")
def imap_server_without_move(request):
    """A second Dovecot that does not offer MOVE, so rua must COPY, flag and UID EXPUNGE."""
    return _server(request, without=("MOVE",))


@pytest.fixture(scope="session")
def imap_server_without_move_or_uidplus(request):
    """One that offers neither MOVE nor UIDPLUS: only a plain EXPUNGE is left."""
    return _server(request, without=("MOVE", "UIDPLUS"))


class Box:
    """A test's own folders on a server: where it seeds, and the done and refused folders."""

    def __init__(self, server, monkeypatch, tmp_path):
        number = next(_folders)
        self.server = server
        self.inbox = f"t{number}"
        self.done, self.refused = f"t{number}-done/rua", f"t{number}-refused"
        secret = tmp_path / "imap-password"
        secret.write_text(dovecot.PASSWORD + "\n")
        self.settings = {"RUA_IMAP_URL": server.url(self.inbox),
                         "RUA_IMAP_PASSWORD_FILE": str(secret),
                         "RUA_IMAP_CA_FILE": server.ca_file,
                         "RUA_IMAP_DONE_FOLDER": self.done,
                         "RUA_IMAP_REFUSED_FOLDER": self.refused}
        for name, value in self.settings.items():
            monkeypatch.setenv(name, value)
        with self.client() as client:
            client.create_folder(self.inbox)

    def client(self) -> IMAPClient:
        context = ssl.create_default_context(cafile=self.server.ca_file)
        client = IMAPClient("127.0.0.1", port=self.server.imaps_port, ssl=True,
                            ssl_context=context, timeout=30)
        client.login(dovecot.USER, dovecot.PASSWORD)
        return client

    def append(self, *messages: bytes, folder: str | None = None, flags=()) -> None:
        with self.client() as client:
            for message in messages:
                client.append(folder or self.inbox, message, flags=flags)

    def subjects(self, folder: str) -> list[str]:
        """The Subject of every message in folder (none when it does not exist), sorted."""
        with self.client() as client:
            if not client.folder_exists(folder):
                return []
            client.select_folder(folder, readonly=True)
            fetched = client.fetch(client.search(["ALL"]), ["BODY.PEEK[HEADER.FIELDS (SUBJECT)]"])
            return sorted(data[b"BODY[HEADER.FIELDS (SUBJECT)]"].decode().strip()[len("Subject: "):]
                          for data in fetched.values())


@pytest.fixture
def box(imap_server, monkeypatch, tmp_path):
    return Box(imap_server, monkeypatch, tmp_path)


@pytest.fixture
def acme(database):
    """The organization that monitors example.com, where report_mail's reports route."""
    org = make_org("Acme")
    make_domain(org, "example.com")
    return org


def make_maildir(path):
    """An empty Maildir (new/, cur/, tmp/) at path; returns path."""
    for sub in ("new", "cur", "tmp"):
        (path / sub).mkdir(parents=True)
    return path


def report_mail(report_id: str, *, domain: str = "example.com", kind: str = "gzip",
                count: int = 3) -> bytes:
    """A receiver's report message: the report attached as .xml.gz, .zip or plain .xml."""
    xml = xmlbuild.report_bytes([xmlbuild.record(count=count, header_from=domain)],
                                report_id=report_id, domain=domain)
    name = f"receiver.example!{domain}!1700000000!1700086399!{report_id}"
    attachment = {"gzip": (f"{name}.xml.gz", (xmlbuild.gzipped(xml), "application/gzip")),
                  "zip": (f"{name}.zip", (xmlbuild.zipped({f"{name}.xml": xml}),
                                          "application/zip")),
                  "xml": (f"{name}.xml", (xml, "text/xml"))}[kind]
    return subject(xmlbuild.mail(dict([attachment])), f"Report {report_id}")


def subject(message: bytes, text: str) -> bytes:
    """The message with its Subject replaced, so tests can tell messages apart."""
    head, _, body = message.partition(b"\n\n")
    lines = [line for line in head.split(b"\n") if not line.startswith(b"Subject:")]
    return b"\n".join(lines + [f"Subject: {text}".encode()]) + b"\n\n" + body


@contextlib.contextmanager
def watching(config, settings: dict):
    """`rua fetch imap --watch` in a process of its own, with these settings and the test's
    store, until the block ends; yields the Lines of its stdout and its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(settings, RUA_DATABASE_URL=config.database_url, RUA_LOCK_DIR=config.lock_dir,
               RUA_OFFLINE="1", PYTHONUNBUFFERED="1")
    rua = str(pathlib.Path(sys.executable).parent / "rua")
    watcher = subprocess.Popen([rua, "fetch", "imap", "--watch"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield Lines(watcher.stdout), Lines(watcher.stderr)
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
        watcher.stdout.close()
        watcher.stderr.close()


class Lines:
    """The lines a stream yields, collected by a thread; wait_for polls them."""

    def __init__(self, stream):
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(stream), daemon=True).start()

    def wait_for(self, prefix: str, count: int = 1, timeout: float = 20) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sum(prefix in line for line in self.lines) >= count:
                return True
            time.sleep(0.05)
        return False


@contextlib.contextmanager
def locked_store(config):
    """Another connection holding the store's write lock on reports; yields the URL rua is to
    use, with which it gives up waiting for that lock (SQLite: its busy timeout; Postgres:
    lock_timeout) while its other writes, such as counting a reading, may still go through."""
    if config.is_sqlite:
        path = config.database_url.removeprefix("sqlite:///")
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            yield config.database_url
            other.execute("ROLLBACK")
        return
    with contextlib.closing(psycopg2.connect(config.database_url)) as other:
        other.cursor().execute("LOCK TABLE report IN SHARE MODE")    # inserts wait
        separator = "&" if "?" in config.database_url else "?"
        yield f"{config.database_url}{separator}options=-c%20lock_timeout%3D300"
        other.rollback()
