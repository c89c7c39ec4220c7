"""mailto: report addresses, read once for DMARC's and TLS-RPT's rua= tags."""
import pytest

from dnscheck import mailto


@pytest.mark.parametrize("uri, host", [
    ("mailto:dmarc@example.com", "example.com"),
    ("MAILTO:dmarc@Reports.Example.COM.", "reports.example.com"),     # case, final dot
    ("mailto:tls%40rpt@example.net", "example.net"),                  # %-escaped, last @ wins
    ("mailto:a%40example.org", "example.org"),                        # RFC 6068 escapes the @
    ("mailto:dmarc@localhost", None),                                 # no dotted host
    ("mailto:@example.com", None),                                    # no local part
    ("mailto:example.com", None),                                     # no address at all
    ("mailto://dmarc@example.com", None),                             # an authority, not mail
    ("mailto:dmarc@exa mple.com", None),
    ("https://example.com/tlsrpt", None),
])
def test_a_mailto_uri_names_its_host_or_nothing(uri, host):
    assert mailto.host(uri) == host
