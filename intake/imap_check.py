"""`rua fetch imap --check`: log in, count what a fetch would take, and move nothing.

The folder is opened read-only (EXAMINE), so not even a message's \\Seen flag changes, and only
the messages' sizes are read: a newcomer sees what a fetch would take and where it would file
it before letting rua move every message of the folder.
"""
from __future__ import annotations

from dataclasses import dataclass

from imapclient.exceptions import IMAPClientError

from intake import expiry, imap
from intake.mailbox_url import IntakeError, Mailbox
from store.clock import utcnow


@dataclass(frozen=True)
class FolderCheck:
    """What a fetch of the folder would take now, and where it would file it."""
    mailbox: Mailbox
    messages: int
    total_bytes: int
    too_large: int              # past RUA_MAX_REPORT_BYTES: a fetch files them as refused
    folders: tuple[tuple[str, bool], ...]      # (done or refused folder, exists already)
    credential: str = ""        # when the login's certificate ends, where its file says

    def lines(self) -> list[str]:
        box = self.mailbox
        said = [f"logged in to {box.where} as {box.user}; {box.folder} holds "
                f"{self.messages:,} message(s), {self.total_bytes:,} bytes"]
        if self.too_large:
            said.append(f"{self.too_large:,} of them larger than RUA_MAX_REPORT_BYTES: a fetch "
                        "files them as refused unread")
        for name, exists in self.folders:
            said.append(f"filed into {name} ({'exists' if exists else 'created on first use'})")
        if self.credential:
            said.append(self.credential)
        said.append(f"a fetch moves every message of {box.folder} out of it (use a folder for "
                    "reports only); this check moved nothing")
        return said


def check(config, mailbox: Mailbox, login) -> FolderCheck:
    """Log in as a fetch does, examine the folder and count; an IntakeError says what failed."""
    client = imap.connect(config, mailbox, login)
    try:
        try:
            client.select_folder(mailbox.folder, readonly=True)
        except IMAPClientError as exc:
            raise IntakeError(f"cannot open the folder {mailbox.folder!r} at {mailbox.where}: "
                              f"{imap.one_line(exc)}") from None
        sizes = imap._sizes(client, client.search(["UNDELETED"]))    # as drain reads them
        filed = imap.Filer(client, config).folders
        folders = tuple((name, bool(client.folder_exists(name)))
                        for name in dict.fromkeys((filed[imap.DONE], filed[imap.REFUSED])))
    finally:
        imap.close(client)
    too_large = sum(size > config.max_report_bytes for size in sizes.values())
    return FolderCheck(mailbox, len(sizes), sum(sizes.values()), too_large, folders,
                   expiry.certificate_end(login, utcnow()))
