"""rua's settings: one frozen dataclass, read from RUA_* environment variables."""
from __future__ import annotations

import dataclasses
import difflib
import logging
from dataclasses import dataclass, field, fields

PREFIX = "RUA_"
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}
# Read by the test suite, not by rua; a shell that exports them for `make test` can still run rua.
TEST_SETTINGS = frozenset({"RUA_CORPUS", "RUA_TEST_DATABASE_URL"})
# Settings whose value is one of a few words, and the whole-number settings with a floor.
LOG_FORMATS = ("text", "json")
CHOICES = {"log_format": LOG_FORMATS,
           "log_level": ("debug", "info", "warning", "error", "critical")}
MINIMUMS = {"retention_days": 0}


class ConfigError(ValueError):
    """A RUA_* variable is unknown or its value cannot be read."""


@dataclass(frozen=True)
class Config:
    """Every knob with a working default; docs/configuration.md's table documents each one."""

    database_url: str = "sqlite:///var/rua.db"
    base_url: str = "http://127.0.0.1:8000/api/v1"
    # The application that shows rua's data to people: event links and cta_urls are its paths.
    app_url: str = ""
    report_address: str = ""
    dns_nameservers: str = ""
    dns_port: int = 53
    dns_timeout: float = 3.0
    offline: bool = False
    # DKIM selectors tried for every domain beside those its reports name (comma-separated).
    dkim_selectors: str = "default,google,selector1,selector2,k1,s1,s2,dkim,mail"
    # The MTA-STS policy's HTTPS port: 443 on the internet (RFC 8461); tests serve elsewhere.
    mta_sts_port: int = 443
    # Free DNS blocklists still run (RFC 5782 zones); each is self-tested before a run trusts it.
    dnsbl_zones: str = ("zen.spamhaus.org,bl.spamcop.net,psbl.surriel.com,bl.mailspike.net,"
                        "dnsbl.dronebl.org")
    geoip_db: str = ""
    max_report_bytes: int = 64 * 1024 * 1024
    max_archive_depth: int = 4
    # What one input file (or fetched message) may cost across all its archive levels.
    max_input_bytes: int = 128 * 1024 * 1024
    max_members: int = 1000
    # Wall-clock seconds one fetched message may take; past them the rest of it is refused.
    max_message_seconds: int = 120
    max_records: int = 100_000
    # What one report may repeat and count (docs/ingest-limits.md: the real reports measured).
    max_auth_results: int = 100
    max_report_auth_results: int = 1_000_000
    max_report_messages: int = 4_000_000_000
    max_tls_policies: int = 1000
    max_failure_details: int = 1000
    max_result_types: int = 100
    max_mx_hosts: int = 100
    max_policy_strings: int = 100
    max_tls_values: int = 1_000_000
    max_report_sessions: int = 4_000_000_000
    # Domains reports may add to an organization by themselves, in all and per UTC day.
    max_auto_domains: int = 100
    max_auto_domains_per_day: int = 20
    # Reporters' domains whose report mail must be DKIM-signed by them (comma-separated).
    require_dkim_from: str = ""
    # Days a report's per-record rows are kept (0: for ever); rollups and summaries stay.
    retention_days: int = 0
    # Minutes a pages' sign-in session lasts without a page view (webapp/pages).
    session_idle_minutes: int = 60
    bind: str = "127.0.0.1:8000"
    workers: int = 0
    proxies: int = 0
    lock_dir: str = "var"
    log_level: str = "info"
    # text, or json: one JSON object per line (logs.py).
    log_format: str = "text"
    # GET /metrics for Prometheus (webapp/metrics.py), and the file of its own bearer token.
    metrics: bool = False
    metrics_token_file: str = ""
    # Mail intake (rua fetch, and the scheduler's fetch job when either source is set).
    imap_url: str = ""
    imap_password: str = field(default="", repr=False)    # kept out of logs and tracebacks
    imap_password_file: str = ""
    imap_done_folder: str = "Archive/rua"
    imap_refused_folder: str = "Archive/rua-refused"
    imap_ca_file: str = ""
    # How rua logs in to IMAP: password, or an OAuth 2.0 token it obtains (intake/oauth.py).
    imap_auth: str = "password"
    imap_oauth_tenant: str = ""
    imap_oauth_client_id: str = ""
    imap_oauth_client_secret: str = field(default="", repr=False)    # kept out of logs
    imap_oauth_secret_file: str = ""
    imap_oauth_cert_file: str = ""
    imap_oauth_service_account_file: str = ""
    # Sovereign clouds (and tests): Microsoft's authority and Google's token URL, and the scope.
    imap_oauth_authority: str = ""
    imap_oauth_token_url: str = ""
    imap_oauth_scope: str = ""
    maildir: str = ""
    fetch_interval: int = 5
    # Alerts: e-mail channels' server (smtp[s]://user:password@host:port?from=ADDRESS).
    smtp_url: str = field(default="", repr=False)    # may hold a password
    # For labs and tests only: lets rua connect to private, loopback and link-local addresses
    # that reports, DNS answers and webhook URLs name (guard/addresses.py).
    outbound_unsafe_allow_private: bool = False

    @classmethod
    def from_env(cls, environ) -> "Config":
        """Build a Config from RUA_* names; an unknown name or unreadable value is an error."""
        known = {PREFIX + f.name.upper(): f for f in fields(cls)}
        unknown = sorted(n for n in environ
                         if n.startswith(PREFIX) and n not in known and n not in TEST_SETTINGS)
        if unknown:
            raise ConfigError("; ".join(_unknown(name, known) for name in unknown))
        _warn_unprefixed(environ, known)
        values = {f.name: _coerce(name, environ[name], f.type)
                  for name, f in known.items() if name in environ}
        for name, value in values.items():
            _check(name, value)
        return cls(**values)

    def replace(self, **changes) -> "Config":
        return dataclasses.replace(self, **changes)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def _coerce(name: str, raw: str, kind: str):
    kind = kind if isinstance(kind, str) else kind.__name__
    try:
        if kind == "bool":
            low = raw.strip().lower()
            if low in TRUE:
                return True
            if low in FALSE:
                return False
            raise ValueError(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a valid {kind}") from None
    return raw


def _unknown(name: str, known) -> str:
    """One unknown name and the setting it was probably meant to be."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    if close:
        return f"unknown setting {name}: did you mean {close[0]}?"
    return f"unknown setting {name} (every setting: docs/configuration.md)"


def _warn_unprefixed(environ, known) -> None:
    """Warn about DATABASE_URL and the like: set without RUA_, rua does not read them. A warning,
    not a refusal: other programs on the host may set the same common names for themselves."""
    for name in sorted(known):
        bare = name[len(PREFIX):]
        if "_" in bare and bare in environ and name not in environ:
            logging.getLogger("rua.config").warning(
                "%s is set but rua reads %s only: %s is ignored", bare, name, bare)


def _check(name: str, value) -> None:
    """Refuse a value outside its setting's words (in any case, as logging takes levels) or below
    its floor."""
    words = CHOICES.get(name)
    if words is not None and value.lower() not in words:
        raise ConfigError(f"{PREFIX}{name.upper()}={value!r} is not one of {', '.join(words)}")
    floor = MINIMUMS.get(name)
    if floor is not None and value < floor:
        raise ConfigError(f"{PREFIX}{name.upper()}={value!r} must be {floor} or more")
