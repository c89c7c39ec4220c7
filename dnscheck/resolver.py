"""DNS look-ups that keep apart "found", "does not exist" and "DNS could not tell"."""
from __future__ import annotations

import ipaddress
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, TypeVar

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdatatype
import dns.resolver

from config import ConfigError

FOUND, MISSING, UNKNOWN = "found", "missing", "unknown"
OFFLINE = "offline (RUA_OFFLINE=1)"
TIMED_OUT, UNREACHABLE, NO_ANSWER = "timed out", "nameserver unreachable", "no nameserver answered"
# Why-texts of a look-up that heard nothing back: a dead resolver, or one silent name.
SILENCE = frozenset({TIMED_OUT, UNREACHABLE, NO_ANSWER})
T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    outcome: str
    records: tuple[str, ...] = ()
    authenticated: bool = False
    why: str = ""
    nxdomain: bool = False

    @property
    def found(self) -> bool:
        return self.outcome == FOUND

    @property
    def missing(self) -> bool:
        return self.outcome == MISSING

    @property
    def unknown(self) -> bool:
        return self.outcome == UNKNOWN


class Lookup:
    """One check run's resolver: config's nameservers, port and timeout, or the system's.

    Offline, every answer is UNKNOWN and no packet is sent. A resolver that answers nothing at
    all, or says no name exists (a broken or captive one), is found out once (`dead` says so)
    and every later answer is UNKNOWN at once."""

    def __init__(self, config):
        self.offline = bool(config.offline)
        self.timeout = float(config.dns_timeout)
        self._resolver, self._why = None, OFFLINE
        if not self.offline:
            try:
                self._resolver = _resolver(config)
            except dns.resolver.NoResolverConfiguration:
                self._why = "no nameserver: set RUA_DNS_NAMESERVERS or /etc/resolv.conf"
        self.dead = ""          # why no look-up can succeed: the resolver answers nothing true
        self._heard = False     # a name was found or said to exist: the resolver is trusted
        self._probe = threading.Lock()
        self._probed = False
        self._answers: dict[tuple[str, str], Answer] = {}
        self._pending: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def query(self, name: str, rdtype: str) -> Answer:
        """The answer for (name, rdtype), asked at most once per Lookup even across threads."""
        key = (name.lower().rstrip("."), rdtype.upper())
        with self._lock:
            if key in self._answers:
                return self._answers[key]
            pending = self._pending.setdefault(key, threading.Lock())
        with pending:
            with self._lock:
                if key in self._answers:
                    return self._answers[key]
            answer = self._ask(*key)
            with self._lock:
                self._answers[key] = answer
                self._pending.pop(key, None)
        return answer

    def unusable(self) -> str:
        """Why no look-up can tell anything (offline, no nameserver, a resolver that answers
        nothing or denies every name), found by one question; "" when the resolver answers."""
        if self._resolver is None:
            return self._why
        self._untrue()
        return self.dead

    def txt(self, name: str) -> Answer:
        return self.query(name, "TXT")

    def _ask(self, name: str, rdtype: str) -> Answer:
        if self._resolver is None:
            return Answer(UNKNOWN, why=self._why)
        try:
            qname = dns.name.from_text(name)
            dns.rdatatype.from_text(rdtype)
        except (dns.exception.DNSException, ValueError):
            # A name that cannot be written in DNS cannot exist there either.
            return Answer(MISSING, why="not a valid DNS name", nxdomain=True)
        if self.dead:
            return Answer(UNKNOWN, why=self.dead)
        answer = self._resolve(qname, rdtype)
        if (answer.why in SILENCE or answer.nxdomain) and self._untrue():
            return Answer(UNKNOWN, why=self.dead)
        if answer.why not in SILENCE and not answer.nxdomain:
            self._heard = True
        return answer

    def _untrue(self) -> bool:
        """Whether the resolver itself answers nothing, or denies every name (not just this
        one): asked once, after the first silence or NXDOMAIN, about a name that must exist
        and that every resolver answers at once (the root's NS)."""
        with self._probe:
            if not self._probed and not self._heard:
                self._probed = True
                servers = ", ".join(self._resolver.nameservers)
                said = _root_answer(self._resolver, self.timeout)
                if said is None:
                    self.dead = f"resolver {servers} did not answer"
                elif said == dns.rcode.NXDOMAIN:
                    self.dead = (f"resolver {servers} says no name exists, not even the root "
                                 f"(a broken or captive resolver)")
            return bool(self.dead)

    def _resolve(self, qname: dns.name.Name, rdtype: str) -> Answer:
        try:
            answer = self._resolver.resolve(qname, rdtype, raise_on_no_answer=False, search=False)
        except dns.resolver.NXDOMAIN:
            return Answer(MISSING, why="NXDOMAIN", nxdomain=True)
        except dns.exception.Timeout:
            return Answer(UNKNOWN, why=TIMED_OUT)
        except dns.resolver.NoNameservers as failure:
            return Answer(UNKNOWN, why=_failure_reason(failure))
        except dns.exception.DNSException as failure:
            return Answer(UNKNOWN, why=type(failure).__name__)
        authenticated = bool(answer.response.flags & dns.flags.AD)
        if answer.rrset is None:
            return Answer(MISSING, why=f"no {rdtype} record", authenticated=authenticated)
        return Answer(FOUND, tuple(_text(rdata) for rdata in answer.rrset),
                      authenticated=authenticated)


def gather(calls: dict[str, Callable[[], T]], bound: int = 8) -> dict[str, T]:
    """Run independent look-ups concurrently, at most `bound` at once; results by the same keys."""
    if not calls:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, min(bound, len(calls)))) as pool:
        futures = {key: pool.submit(call) for key, call in calls.items()}
        return {key: future.result() for key, future in futures.items()}


def _root_answer(resolver: dns.resolver.Resolver, timeout: float) -> int | None:
    """The rcode the first of the resolver's nameservers to reply gives for the root's NS (a
    malformed reply counts as an answer); None when none replies in time."""
    probe = dns.message.make_query(dns.name.root, "NS")
    for server in resolver.nameservers:
        try:
            reply = dns.query.udp(probe, str(server), timeout=timeout, port=resolver.port,
                                  ignore_unexpected=True)
            return reply.rcode()
        except dns.exception.DNSException as failure:
            if not isinstance(failure, dns.exception.Timeout):
                return dns.rcode.FORMERR         # a reply came, malformed
        except OSError:
            continue
    return None


def _resolver(config) -> dns.resolver.Resolver:
    servers = [s.strip() for s in config.dns_nameservers.split(",") if s.strip()]
    for server in servers:
        try:
            ipaddress.ip_address(server)
        except ValueError:
            raise ConfigError(f"RUA_DNS_NAMESERVERS: {server!r} is not an IP address") from None
    if servers:
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = servers
    else:
        resolver = dns.resolver.Resolver()
    resolver.port = int(config.dns_port)
    resolver.timeout = float(config.dns_timeout)
    # Retries inside one query stop here, so a silent server costs two timeouts, not ten.
    resolver.lifetime = 2 * float(config.dns_timeout)
    resolver.use_edns(0, dns.flags.DO, 1232)
    return resolver


def _failure_reason(failure: dns.resolver.NoNameservers) -> str:
    """SERVFAIL / REFUSED / unreachable, from the first server's error."""
    errors = failure.kwargs.get("errors") or []
    if not errors:
        return NO_ANSWER
    error = errors[0][3]
    if isinstance(error, str):
        return error
    if isinstance(error, OSError):
        return UNREACHABLE
    return type(error).__name__


def _text(rdata) -> str:
    """TXT strings of one record joined with no separator (RFC 7208 3.3); other types as text."""
    if rdata.rdtype == dns.rdatatype.TXT:
        return b"".join(rdata.strings).decode("utf-8", "replace")
    return rdata.to_text()
