"""DANE for SMTP (RFC 7672): TLSA records at `_25._tcp.<mx>` for each MX host, DNSSEC-validated."""
from __future__ import annotations

from dnscheck.mx import mail_hosts
from dnscheck.resolver import Answer, gather
from dnscheck.verdict import ABSENT, ERROR, OK, UNKNOWN, WARNING, Verdict

KIND = "dane"
MAX_HOSTS = 10
# Usages DANE-TA(2) and DANE-EE(3) only: SMTP clients treat the PKIX ones as unusable (3.1.3).
USABLE_USAGES = ("2", "3")
DIGEST_HEX = {"0": None, "1": 64, "2": 128}  # matching type -> hex length (0: the full data)


def tlsa_name(host: str) -> str:
    return f"_25._tcp.{host}"


def usable(record: str) -> bool:
    """A TLSA record an SMTP client can use: DANE usage, known selector, digest of right length."""
    parts = record.split()
    if len(parts) < 4:
        return False
    usage, selector, mtype, digest = *parts[:3], "".join(parts[3:])
    if usage not in USABLE_USAGES or selector not in ("0", "1") or mtype not in DIGEST_HEX:
        return False
    size = DIGEST_HEX[mtype]
    return size is None or len(digest) == size


def verdict(domain: str, mx: Answer, tlsa: dict[str, Answer]) -> Verdict:
    """`tlsa` maps each MX host to its TLSA answer; every MX with validated usable TLSA -> ok."""
    hosts = mail_hosts(mx, domain)
    if hosts is None:
        return Verdict(UNKNOWN, f"DNS could not tell the MX hosts of {domain} ({mx.why}), so "
                                "their TLSA records were not checked.")
    if not hosts:
        return Verdict(OK, f"{domain} accepts no mail (null MX or no such name), so DANE has "
                           "nothing to protect.", facts={"hosts": []})
    hosts = hosts[:MAX_HOSTS]
    facts = {"hosts": [{"mx": h, "tlsa": len(tlsa[h].records) if tlsa[h].found else 0,
                        "authenticated": tlsa[h].found and tlsa[h].authenticated}
                       for h in hosts]}
    unknown = [h for h in hosts if tlsa[h].unknown]
    if unknown:
        return Verdict(UNKNOWN, f"DNS could not tell whether {tlsa_name(unknown[0])} has TLSA "
                                f"records ({tlsa[unknown[0]].why}).", facts=facts)
    return _published_verdict(domain, hosts, tlsa, facts)


def _published_verdict(domain, hosts, tlsa: dict[str, Answer], facts: dict) -> Verdict:
    bare = [h for h in hosts if not tlsa[h].found]
    if len(bare) == len(hosts):
        return Verdict(ERROR, f"No MX host of {domain} publishes TLSA records: with them at "
                              f"{tlsa_name(hosts[0])} (in a DNSSEC-signed zone), senders can "
                              "verify your mail servers' certificates without trusting any CA "
                              "and cannot be downgraded to plain text.",
                       facts={**facts, ABSENT: True})
    broken = [h for h in hosts if tlsa[h].found and not any(map(usable, tlsa[h].records))]
    if broken:
        return Verdict(ERROR, f"The TLSA records at {tlsa_name(broken[0])} are all unusable "
                              "(usage 0 or 1, or a digest of the wrong length): DANE senders "
                              "hold mail for that host; publish a 3 1 1 record of its key.",
                       facts=facts)
    if bare:
        return Verdict(WARNING, f"{', '.join(bare)} publish no TLSA records while other MX hosts "
                                f"of {domain} do: mail that goes there is not protected by DANE.",
                       facts=facts)
    unsigned = [h for h in hosts if not tlsa[h].authenticated]
    if unsigned:
        return Verdict(WARNING, f"The TLSA records of {', '.join(unsigned)} are not "
                                "DNSSEC-validated, and senders ignore TLSA records without "
                                "DNSSEC: sign the zone.", facts=facts)
    return Verdict(OK, f"Every MX host of {domain} publishes DNSSEC-validated TLSA records, so "
                       "DANE senders verify its certificate.", facts=facts)


def check(lookup, domain: str) -> Verdict:
    """MX first, then the TLSA records of its hosts concurrently."""
    mx = lookup.query(domain, "MX")
    hosts = (mail_hosts(mx, domain) or ())[:MAX_HOSTS]
    tlsa = gather({h: (lambda h=h: lookup.query(tlsa_name(h), "TLSA")) for h in hosts})
    return verdict(domain, mx, tlsa)
