"""DKIM: the key record at each known selector, its type and size, and the best usable key."""
from __future__ import annotations

import base64
import binascii

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_der_public_key

from dnscheck import tagged
from dnscheck.resolver import Answer, Lookup, gather
from dnscheck.verdict import ERROR, OK, UNKNOWN, WARNING, Verdict, hosted_cta

KIND = "dkim"
STRONG_RSA = 2048
WEAK_RSA = 1024       # still accepted by receivers, but weak (RFC 8301 3.2)
SELECTOR_BOUND = 16   # every selector asked at once: a silent server costs one lifetime
RANK = {OK: 0, WARNING: 1, ERROR: 2}


def key_name(selector: str, domain: str) -> str:
    return f"{selector}._domainkey.{domain}"


def judge_key(selector: str, domain: str, record: str) -> tuple[dict, str]:
    """One key record -> ({"selector", "type", "bits", "status"}, the sentence for it)."""
    name = key_name(selector, domain)
    key = {"selector": selector, "type": "rsa", "bits": None, "status": ERROR}
    try:
        tags = tagged.parse(record)
    except ValueError as problem:
        return key, f"The DKIM record at {name} cannot be read ({problem}): republish it."
    key["type"] = tags.get("k", "rsa").lower()
    if tags.get("v", "DKIM1") != "DKIM1":
        return key, f"The DKIM record at {name} has v={tags['v']} instead of v=DKIM1: fix it."
    if key["type"] not in ("rsa", "ed25519"):
        return key, (f"The DKIM record at {name} has key type k={key['type']}, which receivers "
                     "do not know: publish an rsa or ed25519 key.")
    if "p" not in tags:
        return key, f"The DKIM record at {name} has no p= key: publish the public key."
    data = "".join(tags["p"].split())
    if not data:
        key["status"] = WARNING
        return key, (f"The DKIM key at {name} is revoked (empty p=), so mail signed with it "
                     "fails DKIM: sign with a selector that has a key, or delete the record "
                     "once nothing uses it.")
    try:
        key["bits"] = _bits(key["type"], base64.b64decode(data, validate=True))
    except (ValueError, binascii.Error, TypeError, UnsupportedAlgorithm):
        return key, (f"The DKIM key at {name} is not a valid {key['type']} public key: "
                     "republish it exactly as your mail system gives it.")
    if key["type"] == "ed25519":
        key["status"] = OK
        return key, f"The DKIM key at {name} is Ed25519."
    bits = key["bits"]
    if bits < WEAK_RSA:
        return key, (f"The DKIM key at {name} is RSA {bits}-bit, which receivers reject: "
                     f"publish a {STRONG_RSA}-bit key under a new selector and sign with it.")
    if bits < STRONG_RSA:
        key["status"] = WARNING
        return key, (f"The DKIM key at {name} is RSA {bits}-bit, which is weak: publish a "
                     f"{STRONG_RSA}-bit key under a new selector and sign with it.")
    key["status"] = OK
    return key, f"The DKIM key at {name} is RSA {bits}-bit."


def verdict(domain: str, selectors: list[str], answers: dict[str, Answer]) -> Verdict:
    """The best usable key's verdict, naming the selectors found; unknown when none is known."""
    if not selectors:
        return Verdict(UNKNOWN, f"No DKIM selector is known for {domain} yet: they are learnt "
                       "from its DMARC reports, or add yours to RUA_DKIM_SELECTORS.",
                       facts={"keys": []})
    judged = []
    for selector in selectors:
        answer = answers.get(selector)
        records = [r for r in (answer.records if answer else ()) if _is_key_record(r)]
        if len(records) > 1:
            judged.append(({"selector": selector, "type": "rsa", "bits": None, "status": ERROR},
                           f"{key_name(selector, domain)} serves {len(records)} DKIM records, "
                           "so receivers cannot tell which key signs: keep exactly one."))
        elif records:
            judged.append(judge_key(selector, domain, records[0]))
    facts = {"keys": [key for key, _ in judged]}
    failed = [(s, answers[s].why) for s in selectors if s in answers and answers[s].unknown]
    if not judged:
        if failed:
            return Verdict(UNKNOWN, f"DNS could not tell whether {key_name(failed[0][0], domain)} "
                           f"has a DKIM key ({failed[0][1]}): it is checked again later.",
                           facts=facts)
        return Verdict(UNKNOWN, f"No DKIM key was found for {domain} at the selectors tried "
                       f"({', '.join(selectors)}): the selectors your mail is signed with are "
                       "learnt from its DMARC reports, or add yours to RUA_DKIM_SELECTORS.",
                       facts=facts)
    best_key, best_sentence = min(judged, key=lambda pair: RANK[pair[0]["status"]])
    found = ", ".join(key["selector"] for key, _ in judged)
    others = [sentence for key, sentence in judged
              if key is not best_key and key["status"] != OK]
    details = f"{best_sentence} Keys found at: {found}."
    if best_key["status"] == OK and others:
        details += f" Also: {others[0]}"
    status = best_key["status"]
    return Verdict(status, details, facts=facts,
                   hosted_cta=hosted_cta(domain, KIND, "Fix the DKIM key")
                   if status == ERROR else None)


def check(lookup: Lookup, domain: str, selectors: list[str]) -> Verdict:
    """Ask every selector's key record at once, then judge the keys found."""
    domain = domain.lower().rstrip(".")
    selectors = list(dict.fromkeys(s.strip().lower() for s in selectors if s.strip()))
    answers = gather({s: (lambda s=s: lookup.txt(key_name(s, domain))) for s in selectors},
                     bound=SELECTOR_BOUND)
    return verdict(domain, selectors, answers)


def _is_key_record(record: str) -> bool:
    """A DKIM key record has a p= tag (RFC 6376 3.6.1); other TXT at the name are not keys."""
    try:
        return "p" in tagged.parse(record)
    except ValueError:
        return record.strip().lower().startswith("v=dkim1")


def _bits(kind: str, data: bytes) -> int | None:
    if kind == "ed25519":
        ed25519.Ed25519PublicKey.from_public_bytes(data)  # raw 32 bytes (RFC 8463 4.2)
        return None
    key = load_der_public_key(data)
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("not an RSA key")
    return key.key_size
