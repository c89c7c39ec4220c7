"""Country and network of an IP from local databases: geoip2fast's shipped data by default,
MaxMind-format .mmdb files when RUA_GEOIP_DB names them. No network: offline changes nothing."""
from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass

from sources.identity import InvalidIP, parse_ip

# geoip2fast's file with IPv4 and IPv6 networks and AS names (it ships no AS numbers).
GEOIP2FAST_FILE = "geoip2fast-asn-ipv6.dat.gz"


@dataclass(frozen=True)
class Geo:
    """None wherever the database does not say: a value is never guessed."""
    country: str | None = None
    country_name: str | None = None
    asn: int | None = None
    as_org: str | None = None


UNKNOWN_GEO = Geo()


class GeoError(ValueError):
    """A configured database cannot be opened or read."""


class PackageDatabase:
    """geoip2fast's data: country code and name, and the network's AS name."""

    def __init__(self):
        from geoip2fast import GeoIP2Fast
        self._reader = GeoIP2Fast(geoip2fast_data_file=GEOIP2FAST_FILE)

    def locate(self, ip: str) -> Geo:
        try:
            address = parse_ip(ip)
        except InvalidIP:
            return UNKNOWN_GEO
        found = self._reader.lookup(str(address))
        if getattr(found, "is_private", False) or not address.is_global:
            return UNKNOWN_GEO     # private and reserved space has no country or network
        code = (found.country_code or "").strip()
        if len(code) != 2 or not code.isalpha():
            return Geo(as_org=_text(found.asn_name))
        return Geo(code.upper(), _text(found.country_name), None, _text(found.asn_name))


class MaxMindDatabases:
    """One or more .mmdb files (e.g. a Country or City file and an ASN file), read together."""

    def __init__(self, paths: list[str]):
        import maxminddb
        self._readers = []
        for path in paths:
            if not os.path.isfile(path):
                raise GeoError(f"RUA_GEOIP_DB: {path} is not a file")
            try:
                self._readers.append(maxminddb.open_database(path))
            except (maxminddb.InvalidDatabaseError, ValueError, OSError) as failure:
                raise GeoError(f"RUA_GEOIP_DB: {path} is not a MaxMind database "
                               f"({failure})") from None

    def locate(self, ip: str) -> Geo:
        try:
            address = parse_ip(ip)
        except InvalidIP:
            return UNKNOWN_GEO
        merged: dict = {}
        for reader in self._readers:
            try:
                record = reader.get(str(address))
            except (ValueError, RuntimeError):
                record = None     # a corrupt region of the file: that file does not say
            if isinstance(record, dict):
                for key, value in _fields(record).items():
                    if value is not None:
                        merged.setdefault(key, value)   # the first file that says wins
        return Geo(**merged)


def _fields(record: dict) -> dict:
    """MaxMind's GeoIP2/GeoLite2 layout: country (or registered_country), the ASN fields."""
    country = record.get("country") or record.get("registered_country") or {}
    code = country.get("iso_code") if isinstance(country, dict) else None
    names = country.get("names") if isinstance(country, dict) else None
    asn = record.get("autonomous_system_number")
    return {
        "country": code.upper() if isinstance(code, str) and len(code) == 2 else None,
        "country_name": _text(names.get("en")) if isinstance(names, dict) else None,
        "asn": asn if isinstance(asn, int) and asn > 0 else None,
        "as_org": _text(record.get("autonomous_system_organization")),
    }


def _text(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


_lock = threading.Lock()


def database(geoip_db: str):
    """The reader for the RUA_GEOIP_DB value: the .mmdb files it names, or geoip2fast's."""
    paths = tuple(p.strip() for p in (geoip_db or "").split(",") if p.strip())
    with _lock:     # geoip2fast takes most of a second to load: once per process
        return _open(paths)


@functools.lru_cache(maxsize=4)
def _open(paths: tuple[str, ...]):
    return MaxMindDatabases(list(paths)) if paths else PackageDatabase()
