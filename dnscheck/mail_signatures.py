"""A report message's DKIM signatures verified (dkimpy: RSA and Ed25519, relaxed and simple),
keys looked up through rua's resolver (RUA_DNS_NAMESERVERS, its deadlines, RUA_OFFLINE).

Bounded: at most MAX_SIGNATURES signatures tried per message, within one deadline per message;
each key is asked for and parsed once per MailSignatures (one `rua ingest` or fetch run), so a
mailbox of 10,000 Google reports makes one DNS query per selector. A key DNS gave no answer for
is asked again after ASK_AGAIN_SECONDS: a moment's outage leaves a minute's mail unchecked (the
verdict is kept for good), not the whole run's, and a silent nameserver costs one deadline a
minute.
"""
from __future__ import annotations

import re
import time
from datetime import timezone
from email.utils import getaddresses, parsedate_to_datetime

import dkim
from dkim.util import InvalidTagValueList, parse_tag_value

from dnscheck.resolver import Lookup
from rules.authenticity import (FAIL, PASS, UNKNOWN, Provenance, Signature, verdict)

MAX_SIGNATURES = 4
ASK_AGAIN_SECONDS = 60
# A header block past this is not verified (ingest refuses one past 64 KiB anyway).
MAX_HEADER_BYTES = 64 * 1024
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_FIELD = re.compile(rb"^(from|date)[ \t]*:(.*(?:\r?\n[ \t].*)*)", re.IGNORECASE | re.MULTILINE)
_SIGNATURE = re.compile(rb"^dkim-signature[ \t]*:", re.IGNORECASE | re.MULTILINE)


class _Unchecked(Exception):
    """A signature that cannot be checked (no key, DNS silent, expired); the reason."""


class MailSignatures:
    """Verifies messages of one run; call it with a message's bytes for its Provenance."""

    def __init__(self, config, clock=time.monotonic):
        self.config, self.clock = config, clock
        self.offline = bool(config.offline)
        self.lookup = Lookup(config)
        # One deadline per message: a silent nameserver costs one look-up's lifetime a minute.
        self.seconds = 2 * float(config.dns_timeout)
        self.keys: dict[bytes, tuple | str] = {}      # key name: parsed key, or why none
        self.unanswered: dict[bytes, float] = {}      # key name: when to ask again

    def __call__(self, raw: bytes) -> Provenance:
        if raw[:1].isspace():           # some archives keep a blank line before the headers
            raw = raw.lstrip()
        end = _HEADER_END.search(raw, 0, MAX_HEADER_BYTES + 4)
        header = raw[:end.start() if end else min(len(raw), MAX_HEADER_BYTES)]
        from_domain, sent_at = _from_domain(header), _date(header)
        if end is None:
            return verdict([], from_domain, sent_at, "no header block within 64 KiB")
        count = len(_SIGNATURE.findall(header))
        if count == 0:
            return verdict([], from_domain, sent_at)
        try:
            message = dkim.DKIM(raw, logger=_QUIET, timeout=self.seconds)
        except Exception as exc:    # hostile bytes can trip any library; the report still counts
            return verdict([], from_domain, sent_at, f"unreadable for DKIM ({_one_line(exc)})")
        if self.offline:
            tags = [_tags(message, index) for index in range(min(count, MAX_SIGNATURES))]
            signed = [Signature(_text(t.get(b"d", b"")), UNKNOWN) for t in tags]
            return verdict(signed, from_domain, sent_at, "offline (RUA_OFFLINE=1)")
        deadline = self.clock() + self.seconds
        signatures = []
        for index in range(min(count, MAX_SIGNATURES)):
            if self.clock() >= deadline:
                domain = _text(_tags(message, index).get(b"d", b""))
                signatures.append(Signature(domain, UNKNOWN, "the message's DNS deadline passed"))
                continue
            signatures.append(self._one(message, index))
        return verdict(signatures, from_domain, sent_at)

    def _one(self, message: dkim.DKIM, index: int) -> Signature:
        """The outcome of the message's signature number index."""
        tags = _tags(message, index)
        domain = _text(tags.get(b"d", b""))
        try:
            expires = tags.get(b"x")
            if expires and expires.isdigit() and int(expires) < time.time():
                raise _Unchecked("the signature expired (x=)")
            prepared = message.verify_headerprep(index)
            if not prepared:
                return Signature(domain, FAIL, "unreadable DKIM-Signature")
            sig, include_headers, found = prepared
            if b"from" not in include_headers:      # RFC 6376 5.4: From must be signed
                return Signature(domain, FAIL, "the signature does not cover From (h=)")
            name = sig[b"s"] + b"._domainkey." + sig[b"d"] + b"."
            message.pk, message.keysize, message.ktag, message.seqtlsrpt = self._key(name)
            _whole_body(message, sig)
            valid = message.verify_sig_process(sig, include_headers, found[index], None)
        except _Unchecked as unchecked:
            return Signature(domain, UNKNOWN, str(unchecked))
        except Exception as exc:    # a DKIMException, or hostile bytes tripping dkimpy
            reason = _one_line(exc)
            if reason.startswith("body hash mismatch"):
                reason = "the body was changed after signing (body hash mismatch)"
            return Signature(domain, FAIL, reason)
        if not valid:
            return Signature(domain, FAIL, "the signature does not match the signed headers")
        return Signature(domain, PASS)

    def _key(self, name: bytes) -> tuple:
        """The parsed key published at name (asked once per run, or again a minute after no
        answer); _Unchecked when none is."""
        if self.unanswered.get(name, float("inf")) <= self.clock():
            self.lookup = Lookup(self.config)   # it remembers its answers, silence included
            del self.keys[name]
        if name not in self.keys:
            self.keys[name] = self._fetch(name)
        key = self.keys[name]
        if isinstance(key, str):
            raise _Unchecked(key)
        return key

    def _fetch(self, name: bytes) -> tuple | str:
        text = _text(name)
        answer = self.lookup.txt(text)
        self.unanswered.pop(name, None)
        if answer.unknown:
            self.unanswered[name] = self.clock() + ASK_AGAIN_SECONDS
            return f"no answer for the key at {text} ({answer.why})"
        if not answer.found or not answer.records:
            return f"the key at {text} is no longer published"
        record = answer.records[0].encode("ascii", "replace")
        try:
            if not parse_tag_value(record).get(b"p"):
                return f"the key at {text} is revoked (empty p=)"
        except InvalidTagValueList:
            pass
        try:
            return dkim.evaluate_pk(name, record)
        except dkim.DKIMException as exc:
            return f"the key at {text} is unreadable ({_one_line(exc)})"


def _whole_body(message: dkim.DKIM, sig: dict) -> None:
    """A signature whose l= leaves part of the body unsigned proves nothing of the body's
    attachments (anything could be appended): it counts as failed."""
    if b"l" not in sig:
        return
    canonical = dkim.CanonicalizationPolicy.from_c_value(sig.get(b"c", b"simple/simple"))
    body = canonical.canonicalize_body(message.body)
    if int(sig[b"l"]) < len(body):
        raise dkim.ValidationError(f"l= signs {int(sig[b'l'])} of the body's {len(body)} bytes")


def _tags(message: dkim.DKIM, index: int) -> dict:
    found = [value for name, value in message.headers if name.lower() == b"dkim-signature"]
    try:
        return parse_tag_value(found[index])
    except (IndexError, InvalidTagValueList):
        return {}


def _fields(header: bytes) -> dict[str, str]:
    fields = {}
    for found in _FIELD.finditer(header):
        name = found.group(1).decode().lower()
        value = re.sub(rb"\r?\n", b"", found.group(2)).strip()[:2048]
        fields.setdefault(name, value.decode("utf-8", "replace"))
    return fields


def _from_domain(header: bytes) -> str:
    """The domain of the message's From address ("" when it has none)."""
    value = _fields(header).get("from", "")
    addresses = [address for _, address in getaddresses([value]) if "@" in address]
    return addresses[0].rpartition("@")[2].strip().lower() if addresses else ""


def _date(header: bytes):
    """The message's Date as naive UTC (the store's clock), or None when absent or unreadable."""
    value = _fields(header).get("date", "")
    try:
        sent = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if sent.tzinfo is not None:
        sent = sent.astimezone(timezone.utc).replace(tzinfo=None)
    return sent


def _text(value: bytes) -> str:
    return value.decode("ascii", "replace").strip().rstrip(".").lower()


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())[:200]
    if isinstance(exc, dkim.DKIMException):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Quiet:
    """dkimpy's logger, silenced: the outcome is returned, not logged per signature."""

    def debug(self, *args, **kwargs):
        pass

    error = info = warning = debug


_QUIET = _Quiet()
