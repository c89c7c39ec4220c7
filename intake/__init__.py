"""Mail intake: read report mail from a mailbox (IMAP or Maildir), ingest it, file each message.

ingest/ only reads what it is given; intake/ owns the mailbox side: which messages are new, and
moving each one by its outcome once its reports are committed. Nothing here deletes a message.
"""

# Held while a mailbox is read (`rua fetch`, each watcher's batch, the scheduler's fetch job), and
# only then: one reader at a time, and one waiting for it takes over once it is done.
MAILBOX_LOCK = "fetch.mailbox"
