"""The plain-value parts of IMAP intake: the URL, the password file, folder names, chunks."""
import pytest

from config import Config
from intake.imap import chunks, folder_name
from intake.mailbox_url import IntakeError, Mailbox, parse_url, password


@pytest.mark.parametrize("url, expected", [
    ("imaps://dmarc@mail.example.net/INBOX",
     Mailbox(True, "mail.example.net", 993, "dmarc", "INBOX")),
    ("imap://dmarc%40example.net@mail.example.net:1143/Reports/DMARC",
     Mailbox(False, "mail.example.net", 1143, "dmarc@example.net", "Reports/DMARC")),
    ("imaps://dmarc@[2001:db8::1]", Mailbox(True, "2001:db8::1", 993, "dmarc", "INBOX")),
])
def test_parse_url(url, expected):
    assert parse_url(url) == expected


@pytest.mark.parametrize("url, fragment", [
    ("", "RUA_IMAP_URL is not set"),
    ("imaps://mail.example.net/INBOX", "needs a user and a host"),
    ("imaps://dmarc@mail.example.net:99999/INBOX", "invalid port"),
    ("pop3://dmarc@mail.example.net/", "must start with imaps:// or imap://"),
    ("imaps://dmarc:hunter2@mail.example.net/INBOX", "holds a password"),
])
def test_a_bad_url_is_one_line_without_the_password(url, fragment):
    with pytest.raises(IntakeError, match=fragment) as caught:
        parse_url(url)
    assert "hunter2" not in str(caught.value)


def test_the_password_file_wins_and_loses_one_trailing_newline(tmp_path):
    (tmp_path / "secret").write_text("  two words \r\n")
    config = Config(imap_password="from-env", imap_password_file=str(tmp_path / "secret"))
    assert password(config) == "  two words "
    assert password(Config(imap_password="from-env")) == "from-env"
    with pytest.raises(IntakeError, match="no IMAP password"):
        password(Config())


def test_the_password_never_shows_in_the_settings_repr():
    assert "hunter2" not in repr(Config(imap_password="hunter2"))


@pytest.mark.parametrize("setting, prefix, delimiter, expected", [
    ("Archive/rua", "", "/", "Archive/rua"),
    ("Archive/rua", "", ".", "Archive.rua"),
    ("Archive/rua", "INBOX.", ".", "INBOX.Archive.rua"),
    ("INBOX.Archive/rua", "INBOX.", ".", "INBOX.Archive.rua"),
    ("Archive/rua", "", None, "Archive/rua"),
])
def test_folder_names_follow_the_servers_delimiter_and_namespace(setting, prefix, delimiter,
                                                                  expected):
    assert folder_name(setting, prefix, delimiter) == expected


def test_chunks_keep_order_and_cut_by_count_and_bytes():
    sizes = {1: 10, 2: 10, 3: 10, 4: 500, 5: 10}
    assert chunks([1, 2, 3, 4, 5], sizes, 2, 1000) == [[1, 2], [3, 4], [5]]
    assert chunks([1, 2, 3, 4, 5], sizes, 10, 100) == [[1, 2, 3], [4], [5]]
    assert chunks([], sizes, 10, 100) == []
