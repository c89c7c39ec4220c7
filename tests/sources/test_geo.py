"""Country and network: geoip2fast's shipped data, and MaxMind-format files written here."""
from __future__ import annotations

import pytest
from mmdb_writer import MMDBWriter
from netaddr import IPSet

from sources import geo
from sources.geo import Geo, GeoError


@pytest.fixture(scope="module")
def shipped():
    return geo.database("")


def test_the_shipped_database_knows_public_networks(shipped):
    google = shipped.locate("8.8.8.8")
    assert (google.country, google.country_name, google.asn) == ("US", "United States", None)
    assert google.as_org == "GOOGLE"          # geoip2fast ships AS names, not numbers
    assert shipped.locate("2001:4860:4860::8888").country == "US"


@pytest.mark.parametrize("ip", ["10.1.2.3", "192.0.2.1", "2001:db8::1", "::1", "not an ip"])
def test_private_reserved_and_bad_addresses_are_unknown_never_guessed(shipped, ip):
    assert shipped.locate(ip) == Geo()


def write(path, networks: dict[str, dict]) -> str:
    writer = MMDBWriter(ip_version=6, database_type="Test", ipv4_compatible=True)
    for network, record in networks.items():
        writer.insert_network(IPSet([network]), record)
    writer.to_db_file(str(path))
    return str(path)


@pytest.fixture
def mmdb(tmp_path):
    country = write(tmp_path / "country.mmdb", {
        "198.51.100.0/24": {"country": {"iso_code": "de", "names": {"en": "Germany"}}},
        "203.0.113.0/24": {"registered_country": {"iso_code": "FR", "names": {"en": "France"}}},
        "2001:db8:aa::/48": {"country": {"iso_code": "NL", "names": {"en": "Netherlands"}}},
    })
    asn = write(tmp_path / "asn.mmdb", {
        "198.51.100.0/24": {"autonomous_system_number": 64500,
                            "autonomous_system_organization": "Example Net"},
    })
    return f"{country}, {asn}"


def test_maxmind_files_are_read_together(mmdb):
    located = geo.database(mmdb)
    assert located.locate("198.51.100.7") == Geo("DE", "Germany", 64500, "Example Net")
    assert located.locate("203.0.113.9") == Geo("FR", "France", None, None)
    assert located.locate("2001:db8:aa::5") == Geo("NL", "Netherlands", None, None)
    assert located.locate("192.0.2.1") == Geo()


def test_a_missing_or_unreadable_file_is_a_clear_error(tmp_path):
    with pytest.raises(GeoError, match="is not a file"):
        geo.database(str(tmp_path / "absent.mmdb"))
    junk = tmp_path / "junk.mmdb"
    junk.write_bytes(b"not a database")
    with pytest.raises(GeoError, match="is not a MaxMind database"):
        geo.database(str(junk))
