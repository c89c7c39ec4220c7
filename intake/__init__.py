"""Mail intake: read report mail from a mailbox (IMAP or Maildir), ingest it, file each message.

ingest/ only reads what it is given; intake/ owns the mailbox side: which messages are new, and
moving each one by its outcome once its reports are committed. Nothing here deletes a message.
"""
