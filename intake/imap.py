"""IMAP intake with imapclient: every message of the folder ingested, then moved by outcome.

A message is moved only after ingest_message has returned, and every report in it is committed
by then (one the store failed to take, locked or unreachable, is not moved at all), so a
crash or a dropped connection at any point leaves at worst messages that are read again next
time, which dedupe makes harmless; one whose readings failed twice (the process died, or an
error rua cannot classify) is filed as refused (intake/poison.py). Nothing is deleted:
without MOVE, a message is copied, flagged \\Deleted and expunged only once the copy exists.
"""
from __future__ import annotations

import ssl
import time
from typing import Callable

from imapclient import DELETED, IMAPClient
from imapclient.exceptions import CapabilityError, IMAPClientAbortError, IMAPClientError, LoginError

from dnscheck.mail_signatures import MailSignatures
from ingest.pipeline import FileResult, ingest_message
from intake import imap_login
from intake.mailbox_url import IntakeError, Mailbox, parse_url
from intake.outcome import DONE, KEEP, REFUSED, too_large
from intake.poison import Reading, message_key, read_once

# One FETCH of bodies takes at most this many messages or bytes, whichever comes first.
CHUNK_MESSAGES = 100
CHUNK_BYTES = 32 * 1024 * 1024
# RFC 2177: a server may log out a client idle for 30 minutes, so IDLE is renewed before that.
REIDLE_SECONDS = 25 * 60
COMMAND_TIMEOUT = 60
MAX_BACKOFF = 300
# What a dropped connection raises, from the socket or from imaplib's reader.
DROPPED = (OSError, IMAPClientAbortError)


def connect(config, mailbox: Mailbox | None = None, login=None) -> IMAPClient:
    """A logged-in client over verified TLS; any failure is an IntakeError of one line.
    `login` (imap_login.for_config's) is the password or the OAuth token source to log in with."""
    mailbox = mailbox or parse_url(config.imap_url)
    login = login or imap_login.for_config(config, mailbox)
    context = _tls_context(config.imap_ca_file)
    login.prepare()         # a token is obtained before anything connects to the mailbox
    client = None
    try:
        client = IMAPClient(mailbox.host, port=mailbox.port, ssl=mailbox.implicit_tls,
                            ssl_context=context, timeout=COMMAND_TIMEOUT)
        if not mailbox.implicit_tls:
            client.starttls(context)
        login.log_in(client)
        return client
    except ssl.SSLCertVerificationError as exc:
        error = (f"{mailbox.where}: certificate not trusted ({exc.verify_message}); "
                 f"RUA_IMAP_CA_FILE adds a private CA")
    except CapabilityError:
        error = (f"{mailbox.where} offers no STARTTLS: the password is never sent unencrypted "
                 f"(use imaps:// if the server has TLS on another port)")
    except LoginError as exc:
        error = login.refusal(mailbox.where, str(exc))    # bounded, secrets masked, there
    except IntakeError as exc:
        error = f"{mailbox.where}: {exc}"
    except (OSError, IMAPClientError) as exc:     # a BYE during login may quote it
        error = (f"cannot use the IMAP server {mailbox.where} (RUA_IMAP_URL): "
                 f"{login.said(one_line(exc))}")
    close(client)
    raise IntakeError(error)


def close(client: IMAPClient | None) -> None:
    """Log out politely when the connection still works, else just drop the socket."""
    if client is None:
        return
    try:
        client.logout()
    except (OSError, IMAPClientError):
        try:
            client.shutdown()
        except OSError:
            pass


def drain(client: IMAPClient, mailbox: Mailbox, config, handle: Callable[[FileResult], None],
          *, org=None, chunk: int = CHUNK_MESSAGES) -> int:
    """Ingest every message in the folder and file each by outcome; handle(result) is called
    for each, in order. Returns the number of messages handled."""
    try:
        selected = client.select_folder(mailbox.folder)
    except IMAPClientError as exc:
        if isinstance(exc, IMAPClientAbortError):
            raise
        raise IntakeError(f"cannot open the folder {mailbox.folder!r} at {mailbox.where}: "
                          f"{one_line(exc)}") from None
    folder_id = folder_key(mailbox, selected.get(b"UIDVALIDITY"))
    uids = client.search(["UNDELETED"])     # a \Deleted one was already copied out
    sizes = _sizes(client, uids)
    filer, handled = Filer(client, config), 0
    attest = MailSignatures(config)         # each DKIM key looked up once per drain
    for group in chunks([u for u in uids if u in sizes], sizes, chunk, CHUNK_BYTES):
        wanted = [u for u in group if sizes[u] <= config.max_report_bytes]
        bodies = client.fetch(wanted, ["BODY.PEEK[]"]) if wanted else {}
        filed: dict[str, list[int]] = {DONE: [], REFUSED: [], KEEP: []}
        for uid in group:
            origin = f"{mailbox.folder};UID={uid}"
            if sizes[uid] > config.max_report_bytes:
                reading = Reading(too_large(origin, sizes[uid], config.max_report_bytes), REFUSED)
            elif uid in bodies:
                body = bodies[uid][b"BODY[]"]
                reading = read_once(message_key(folder_id, str(uid)), origin,
                                    lambda: ingest_message(origin, body, config=config, org=org,
                                                           attest=attest))
            else:
                continue                    # moved away by another client since the search
            handle(reading.result)
            filed[reading.goes].append(uid)
            handled += 1
        filer.file(filed[DONE], DONE)
        filer.file(filed[REFUSED], REFUSED)     # KEEP ones stay, to be read again
    return handled


def folder_key(mailbox: Mailbox, uidvalidity) -> str:
    """The folder's name for intake/poison.py's message_key, with its UIDVALIDITY: a UID names
    a message as long as the folder's UIDVALIDITY stays (RFC 9051)."""
    return f"imap:{mailbox.user}@{mailbox.where}/{mailbox.folder};UIDVALIDITY={uidvalidity}"


def chunks(uids: list[int], sizes: dict[int, int], most: int, most_bytes: int) -> list[list[int]]:
    """uids in order, cut into groups of at most `most` messages and about `most_bytes`."""
    groups: list[list[int]] = []
    total = 0
    for uid in uids:
        if not groups or len(groups[-1]) >= most or total + sizes[uid] > most_bytes:
            groups.append([])
            total = 0
        groups[-1].append(uid)
        total += sizes[uid]
    return groups


def folder_name(setting: str, prefix: str, delimiter: str | None) -> str:
    """The server's name for a folder setting: `/` becomes its delimiter, under its namespace."""
    name = setting.strip("/").replace("/", delimiter) if delimiter else setting
    return name if name.startswith(prefix) else prefix + name


class Filer:
    """Moves messages out of the selected folder into the outcome's folder, made on first use."""

    def __init__(self, client: IMAPClient, config):
        self.client = client
        prefix, delimiter = _personal_namespace(client)
        self.folders = {DONE: folder_name(config.imap_done_folder, prefix, delimiter),
                        REFUSED: folder_name(config.imap_refused_folder, prefix, delimiter)}
        self.ready: set[str] = set()

    def file(self, uids: list[int], kind: str) -> None:
        if not uids:
            return
        client, folder = self.client, self.folders[kind]
        if folder not in self.ready:
            if not client.folder_exists(folder):
                client.create_folder(folder)
                client.subscribe_folder(folder)    # so that mail clients show it
            self.ready.add(folder)
        if client.has_capability("MOVE"):
            client.move(uids, folder)
            return
        client.copy(uids, folder)
        client.add_flags(uids, [DELETED], silent=True)
        if client.has_capability("UIDPLUS"):
            client.uid_expunge(uids)
        elif set(client.search(["DELETED"])) <= set(uids):
            # Plain EXPUNGE removes every \Deleted message: only when all of them are ours.
            client.expunge()


def watch(config, batch: Callable[[IMAPClient, Mailbox], float | None],
          notice: Callable[[str], None], *, sleep=time.sleep,
          reidle_seconds: float = REIDLE_SECONDS) -> None:
    """Run batch(client, mailbox) now and whenever the server reports a change, forever.

    batch returns how many seconds at most to wait for a change before it runs again (0: at
    once; None: until a change or the re-IDLE): mail it could not take yet is not left for
    the next change. The first connection's failure is raised (a wrong password should stop
    at once); later a dropped or refused connection is retried with a doubling delay up to
    MAX_BACKOFF seconds. An OAuth token due for renewal is renewed on a new connection, as a
    server may end a session whose token has expired.
    """
    mailbox = parse_url(config.imap_url)
    login = imap_login.for_config(config, mailbox)
    client: IMAPClient | None = connect(config, mailbox, login)
    delay = 1
    while True:
        try:
            if client is None:
                client = connect(config, mailbox, login)
                notice(f"reconnected to {mailbox.where}")
            again = batch(client, mailbox)
            delay = 1
            wait = reidle_seconds if again is None else min(again, reidle_seconds)
            renew_in = login.renew_in()
            if renew_in is not None:
                wait = min(wait, renew_in)
            if wait > 0:
                wait_for_change(client, wait)
            if renew_in is not None and login.renew_in() <= 0:
                notice(f"the access token is due for renewal: reconnecting to {mailbox.where} "
                       f"with a new one")
                close(client)
                client = None
        except (*DROPPED, IntakeError) as exc:
            notice(f"connection to {mailbox.where} lost ({one_line(exc)}); "
                   f"reconnecting in {delay} s")
            close(client)
            client = None
            sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)


def wait_for_change(client: IMAPClient, seconds: float) -> None:
    """IDLE until the server says anything (new mail, a keep-alive) or `seconds` pass."""
    if client.noop()[1]:
        return      # a change since the last command (mail that came after the search)
    client.idle()
    try:
        client.idle_check(timeout=seconds)
    finally:
        # DONE also proves the connection alive: idle_check returns quietly on a closed socket.
        client.idle_done()


def _sizes(client: IMAPClient, uids: list[int]) -> dict[int, int]:
    sizes: dict[int, int] = {}
    for start in range(0, len(uids), 1000):
        fetched = client.fetch(uids[start:start + 1000], ["RFC822.SIZE"])
        sizes.update((uid, data[b"RFC822.SIZE"]) for uid, data in fetched.items())
    return sizes


def _personal_namespace(client: IMAPClient) -> tuple[str, str | None]:
    if client.has_capability("NAMESPACE"):
        personal = client.namespace().personal
        if personal:
            prefix, delimiter = personal[0]
            return prefix, delimiter
    listed = client.list_folders("", "")     # LIST "" "" answers with the delimiter alone
    delimiter = listed[0][1] if listed else None
    return "", delimiter.decode() if isinstance(delimiter, bytes) else delimiter


def _tls_context(ca_file: str) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_file:
        try:
            context.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise IntakeError(f"cannot read RUA_IMAP_CA_FILE {ca_file}: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
    return context


def one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror        # "Connection refused", not its errno (args[0])
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return " ".join(str(text or exc or type(exc).__name__).split())[:300]
