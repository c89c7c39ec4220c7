"""Maildir intake: messages in new/ (and cur/ when asked) ingested, then marked seen in cur/.

Marking seen is what a mail client does: the file moves to cur/ with the S flag in its name
(refused ones get F, flagged, too, so a person sees which need a look). Nothing is deleted. A
message the store failed to take stays in new/ to be read again; one whose readings failed
twice (the process died, or an error rua cannot classify) is filed as refused
(intake/poison.py).
"""
from __future__ import annotations

import os
from typing import Callable

from dnscheck.mail_signatures import MailSignatures
from ingest.pipeline import FileResult, ingest_message
from intake.mailbox_url import IntakeError
from intake.outcome import KEEP, REFUSED, too_large
from intake.poison import Reading, message_key, read_once

INFO = ":2,"    # the Maildir info separator and version (the experimental version 1 is unused)


def seen_name(name: str, flagged: bool = False) -> str:
    """The file name with the S flag (and F when flagged) added, flags kept in ASCII order."""
    base, _, flags = name.partition(INFO)
    wanted = set(flags) | {"S"} | ({"F"} if flagged else set())
    return base + INFO + "".join(sorted(wanted))


def pending(path: str, include_cur: bool = False) -> list[str]:
    """The message files to read, new/ first, each folder in name order."""
    if not all(os.path.isdir(os.path.join(path, sub)) for sub in ("new", "cur", "tmp")):
        raise IntakeError(f"{path}: not a Maildir (it needs new/, cur/ and tmp/ folders)")
    found = []
    for sub in ("new", "cur") if include_cur else ("new",):
        folder = os.path.join(path, sub)
        found += [os.path.join(folder, name) for name in sorted(os.listdir(folder))
                  if not name.startswith(".") and os.path.isfile(os.path.join(folder, name))]
    return found


def drain(path: str, config, handle: Callable[[FileResult], None], *, org=None,
          include_cur: bool = False) -> int:
    """Ingest every pending message, then mark it seen; handle(result) for each in order."""
    handled = 0
    mailbox = "maildir:" + os.path.realpath(path)
    attest = MailSignatures(config)         # each DKIM key looked up once per drain
    for message in pending(path, include_cur):
        try:
            size = os.path.getsize(message)
        except FileNotFoundError:
            continue                        # a mail client moved it meanwhile
        if size > config.max_report_bytes:
            reading = Reading(too_large(message, size, config.max_report_bytes), REFUSED)
        else:
            # The name before the info (":2,...") stays the message's as it moves to cur/.
            key = message_key(mailbox, os.path.basename(message).split(":")[0])
            reading = read_once(key, message, lambda: _ingest(message, config, org, attest))
        if reading is None:
            continue                        # a mail client moved it meanwhile
        handle(reading.result)
        if reading.goes != KEEP:            # a KEEP one is read again next time
            mark_seen(path, message, flagged=reading.goes == REFUSED)
        handled += 1
    return handled


def mark_seen(maildir: str, message: str, flagged: bool = False) -> str:
    """Move the message file to cur/ with the S flag; its new path."""
    target = os.path.join(maildir, "cur", seen_name(os.path.basename(message), flagged))
    if target != message:
        os.rename(message, target)
    return target


def _ingest(message: str, config, org, attest) -> FileResult | None:
    """The message's result; None when it is gone before it could be read."""
    try:
        with open(message, "rb") as stream:
            data = stream.read()
    except FileNotFoundError:
        return None
    return ingest_message(message, data, config=config, org=org, attest=attest)
