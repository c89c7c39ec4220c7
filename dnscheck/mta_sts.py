"""MTA-STS (RFC 8461): the `_mta-sts` TXT record, the HTTPS policy, its cover of the MX hosts."""
from __future__ import annotations

import re
from dataclasses import dataclass

from dnscheck import tagged
from dnscheck.mx import mail_hosts
from dnscheck.policy_fetch import PATH, Fetched, fetch
from dnscheck.resolver import Answer, gather
from dnscheck.verdict import ERROR, OK, UNKNOWN, WARNING, Verdict, hosted_cta

KIND = "mta_sts"
MODES = ("enforce", "testing", "none")
MAX_AGE_LIMIT = 31557600  # one year, RFC 8461 3.2
_ID = re.compile(r"[A-Za-z0-9]{1,32}")
_LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?"
_MX_PATTERN = re.compile(rf"(\*\.)?({_LABEL}\.)*{_LABEL}\.?", re.IGNORECASE)


@dataclass(frozen=True)
class MtaStsPolicy:
    mode: str
    max_age: int
    mx: tuple[str, ...]


def record_id(record: str) -> str:
    """The policy id of a `v=STSv1; id=...` record; ValueError says what is wrong."""
    tags = tagged.parse(record)
    if "id" not in tags:
        raise ValueError("it has no id=")
    if not _ID.fullmatch(tags["id"]):
        raise ValueError(f"id={tags['id']} is not 1 to 32 letters or digits")
    return tags["id"]


def parse_policy(body: bytes) -> MtaStsPolicy:
    """The policy file's fields (RFC 8461 3.2); ValueError names the first rule it breaks."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    single: dict[str, str] = {}
    mx: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not colon or not key:
            raise ValueError(f"line {number} is not 'key: value'")
        if key == "mx":
            mx.append(value)
        elif key in single:
            raise ValueError(f"{key} appears twice")
        elif key in ("version", "mode", "max_age"):
            single[key] = value
    return _checked(single, tuple(mx))


def _checked(fields: dict[str, str], mx: tuple[str, ...]) -> MtaStsPolicy:
    if fields.get("version") != "STSv1":
        raise ValueError("its version line is not 'version: STSv1'")
    mode = fields.get("mode")
    if mode not in MODES:
        raise ValueError(f"mode {mode or '(none)'} is not enforce, testing or none")
    age = fields.get("max_age", "")
    if not (age.isascii() and age.isdigit() and len(age) <= 10):
        raise ValueError(f"max_age {age or '(none)'} is not a whole number of seconds")
    if int(age) > MAX_AGE_LIMIT:
        raise ValueError(f"max_age {age} is over the {MAX_AGE_LIMIT} seconds (a year) allowed")
    bad = [p for p in mx if not _MX_PATTERN.fullmatch(p)]
    if bad:
        raise ValueError(f"mx {bad[0] or '(empty)'} is not a host name or a *. wildcard")
    if mode != "none" and not mx:
        raise ValueError("it lists no mx: host")
    return MtaStsPolicy(mode=mode, max_age=int(age), mx=mx)


def covers(pattern: str, host: str) -> bool:
    """A wildcard stands for exactly one leftmost label: *.example.com covers a.example.com only."""
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if pattern.startswith("*."):
        first, _, rest = host.partition(".")
        return bool(first) and rest == pattern[2:]
    return host == pattern


def uncovered(policy: MtaStsPolicy, hosts: tuple[str, ...]) -> list[str]:
    return [h for h in hosts if not any(covers(p, h) for p in policy.mx)]


def verdict(domain: str, txt: Answer, fetched: Fetched | None, mx: Answer | None) -> Verdict:
    """The record, then the policy, then its cover of the MX hosts; `fetched` None = not fetched."""
    name, url = f"_mta-sts.{domain}", f"https://mta-sts.{domain}{PATH}"
    cta = hosted_cta(domain, KIND, "Set up MTA-STS")
    early, record = tagged.presence(
        txt, "STSv1", name=name, label="MTA-STS", cta=cta,
        benefit=f"with one and a policy at {url}, senders refuse to deliver over unverified "
                "TLS, so nobody on the path can strip encryption.")
    if early:
        return early
    try:
        policy_id = record_id(record)
    except ValueError as problem:
        return Verdict(ERROR, f"The MTA-STS record at {name} is malformed ({problem}): it must "
                              "read v=STSv1; id=<1 to 32 letters or digits>.", hosted_cta=cta)
    return _policy_verdict(domain, url, policy_id, fetched, mx, cta)


def _policy_verdict(domain, url, policy_id, fetched, mx, cta) -> Verdict:
    facts = {"id": policy_id}
    if fetched is None or fetched.unknown:
        why = fetched.problem if fetched else "it was not fetched"
        return Verdict(UNKNOWN, f"The MTA-STS policy at {url} could not be checked: {why}.",
                       facts=facts)
    problem = _fetch_problem(fetched)
    if not problem:
        try:
            policy = parse_policy(fetched.body)
        except ValueError as invalid:
            problem = f"is invalid: {invalid}"
    if problem:
        return Verdict(ERROR, f"The MTA-STS policy at {url} {problem}; senders act as if "
                              f"{domain} had no policy.", hosted_cta=cta, facts=facts)
    facts.update(mode=policy.mode, max_age=policy.max_age, mx=list(policy.mx))
    return _cover_verdict(domain, policy, mx, cta, facts)


def _fetch_problem(fetched: Fetched) -> str:
    if fetched.problem:
        return f"could not be fetched: {fetched.problem}"
    if 300 <= fetched.status < 400:
        return (f"answers HTTP {fetched.status}, a redirect to {fetched.location or '(nowhere)'}, "
                "which senders do not follow: serve the policy at this URL itself")
    if fetched.status != 200:
        return f"answers HTTP {fetched.status} instead of 200"
    media_type = fetched.content_type.split(";")[0].strip().lower()
    if media_type != "text/plain":
        return f"is served as {media_type or 'no content type'}, not text/plain"
    return ""


def _cover_verdict(domain, policy: MtaStsPolicy, mx: Answer | None, cta, facts) -> Verdict:
    if policy.mode == "none":
        return Verdict(WARNING, "The MTA-STS policy has mode none, which tells senders to forget "
                                "it: set mode: enforce (or testing) to protect delivery.",
                       facts=facts)
    hosts = mail_hosts(mx, domain) if mx is not None else None
    if hosts is None:
        why = mx.why if mx is not None else "not looked up"
        return Verdict(UNKNOWN, f"The MTA-STS policy is valid, but DNS could not tell the MX "
                                f"hosts of {domain} it must cover ({why}).", facts=facts)
    missed = uncovered(policy, hosts)
    if missed and policy.mode == "enforce":
        return Verdict(ERROR, f"The MTA-STS policy (mode enforce) has no mx: line matching "
                              f"{', '.join(missed)}: senders refuse to deliver there until "
                              "the policy lists it.", hosted_cta=cta, facts=facts)
    if missed:
        return Verdict(WARNING, f"MTA-STS is in testing mode and its mx: lines miss "
                                f"{', '.join(missed)}: add them before switching to enforce, "
                                "or senders will refuse to deliver there.",
                       hosted_cta=cta, facts=facts)
    if policy.mode == "testing":
        return Verdict(WARNING, "MTA-STS is in testing mode: senders report TLS failures but "
                                "still deliver without verified TLS; switch to mode: enforce "
                                "once TLS-RPT reports show no failures.", facts=facts)
    return Verdict(OK, f"MTA-STS makes senders use verified TLS to every MX host of {domain} "
                       f"(policy id {facts['id']}, cached {policy.max_age} s).", facts=facts)


def check(lookup, domain: str, *, port: int = 443, timeout: float | None = None,
          allow_private: bool = False) -> Verdict:
    """Look up the record; when it is sound, fetch the policy and the MX hosts it must cover."""
    txt = lookup.txt(f"_mta-sts.{domain}")
    outcome, records = tagged.pick(txt, "STSv1")
    try:
        sound = outcome == tagged.FOUND and bool(record_id(records[0]))
    except ValueError:
        sound = False
    if not sound:
        return verdict(domain, txt, None, None)
    seconds = timeout if timeout is not None else 2 * lookup.timeout
    found = gather({"policy": lambda: fetch(lookup, f"mta-sts.{domain}", port=port,
                                            timeout=seconds, allow_private=allow_private),
                    "mx": lambda: lookup.query(domain, "MX")})
    return verdict(domain, txt, found["policy"], found["mx"])
