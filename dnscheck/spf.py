"""SPF (RFC 7208): the one v=spf1 record, its DNS lookup count, void lookups and its `all`."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from dnscheck.resolver import Answer, Lookup, gather
from dnscheck.verdict import ERROR, OK, UNKNOWN, WARNING, Verdict, hosted_cta

KIND = "spf"
MAX_LOOKUPS = 10      # RFC 7208 4.6.4
MAX_VOID = 2          # RFC 7208 4.6.4 (SHOULD)
MAX_MX_NAMES = 10     # RFC 7208 4.6.4, per mx mechanism
MAX_RECORDS = 60      # records followed before giving up on a runaway include tree
MAX_ROUNDS = 12       # levels of includes fetched
LOOKUP_MECHANISMS = ("include", "a", "mx", "ptr", "exists")
MECHANISMS = LOOKUP_MECHANISMS + ("all", "ip4", "ip6")
_TERM = re.compile(r"([+\-~?]?)([a-z][a-z0-9_.-]*)(?::([^/]*))?((?:/\d*){0,2})\Z", re.IGNORECASE)
_MODIFIER = re.compile(r"([a-z][a-z0-9_.-]*)=(.*)\Z", re.IGNORECASE)
_MACRO = re.compile(r"%\{([a-z])[^}]*\}", re.IGNORECASE)
ALL_WORDS = {"+": "+all", "-": "-all", "~": "~all", "?": "?all"}


def spf_records(records) -> list[str]:
    """The TXT records that are SPF records: `v=spf1` then a space or nothing (RFC 7208 4.5)."""
    return [r.strip() for r in records
            if r.strip().lower() == "v=spf1" or r.strip().lower().startswith("v=spf1 ")]


@dataclass
class Evaluation:
    """What walking a domain's SPF tree found, given the answers known so far."""
    record: str | None = None
    lookups: int = 0
    void_lookups: int = 0
    includes: list[str] = field(default_factory=list)
    all: str | None = None                 # "+all", "-all", "~all", "?all" of the top record
    problems: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    wanted: set[tuple[str, str]] = field(default_factory=set)
    visits: int = 0


def evaluate(domain: str, answers: dict[tuple[str, str], Answer]) -> Evaluation:
    """Walk the SPF tree of `domain` as far as `answers` go; what is still needed is in `wanted`.

    Pure: the caller fetches `wanted` and calls again until nothing is wanted."""
    found = Evaluation()
    top = _visit(domain, answers, found, (domain,), top=True)
    if top == "none" and not found.unknown:
        found.problems.insert(0, (ERROR, f"{domain} publishes no SPF record, so receivers "
                                  "cannot tell which servers may send its mail: publish one "
                                  "TXT record such as \"v=spf1 mx -all\"."))
    return found


def verdict(domain: str, found: Evaluation) -> Verdict:
    """From a finished evaluation to status, the most urgent sentence, and the facts."""
    facts = {"lookups": found.lookups, "void_lookups": found.void_lookups,
             "record": found.record, "includes": found.includes}
    if found.unknown:
        return Verdict(UNKNOWN, f"DNS could not answer for {found.unknown[0]}, so the SPF "
                       f"record of {domain} could not be evaluated: it is checked again later.",
                       facts={**facts, "lookups": None})
    problems = list(found.problems)
    if found.lookups > MAX_LOOKUPS:
        problems.append((ERROR, f"SPF needs {found.lookups} DNS lookups; receivers stop at "
                         f"{MAX_LOOKUPS}, so SPF fails for every message: flatten or remove "
                         "an include."))
    if found.void_lookups > MAX_VOID:
        problems.append((ERROR, f"SPF of {domain} makes {found.void_lookups} look-ups that find "
                         f"nothing; receivers stop after {MAX_VOID}, so SPF fails: remove the "
                         "mechanisms that name domains without records."))
    if found.record is not None:
        problems.extend(_all_gaps(domain, found.all))
    problems.sort(key=lambda problem: problem[0] != ERROR)
    if problems:
        status, details = problems[0]
        if len(problems) > 1:
            facts["problems"] = [sentence for _, sentence in problems]
        label = "Publish an SPF record" if found.record is None else "Fix the SPF record"
        return Verdict(status, details, facts=facts,
                       hosted_cta=hosted_cta(domain, KIND, label) if status == ERROR else None)
    return Verdict(OK, f"SPF of {domain} ends in {found.all} and needs {found.lookups} of the "
                   f"{MAX_LOOKUPS} DNS lookups receivers allow.", facts=facts)


def check(lookup: Lookup, domain: str) -> Verdict:
    """Fetch the SPF tree level by level (each level's look-ups at once), then judge it."""
    domain = domain.lower().rstrip(".")
    answers: dict[tuple[str, str], Answer] = {}
    for _ in range(MAX_ROUNDS):
        found = evaluate(domain, answers)
        if not found.wanted:
            break
        answers.update(gather({key: (lambda key=key: lookup.query(*key))
                               for key in sorted(found.wanted)}))
    return verdict(domain, found)


def parse(record: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Terms of an SPF record as (qualifier, name, argument), and each syntax error's sentence."""
    terms, problems = [], []
    for word in record.split()[1:]:
        modifier = _MODIFIER.match(word)
        if modifier:
            terms.append(("=", modifier.group(1).lower(), modifier.group(2)))
            continue
        term = _TERM.match(word)
        name = term.group(2).lower() if term else ""
        if name not in MECHANISMS:
            problems.append(f"'{word}' is not an SPF mechanism")
            continue
        argument = term.group(3)
        if name in ("ip4", "ip6"):
            if not _valid_network(name, (argument or "") + term.group(4)):
                problems.append(f"'{word}' is not a valid {name} address")
                continue
        elif name in ("include", "exists") and not argument:
            problems.append(f"'{word}' names no domain")
            continue
        elif name == "all" and (argument is not None or term.group(4)):
            problems.append(f"'{word}' takes no argument")
            continue
        terms.append((term.group(1) or "+", name, argument or ""))
    return terms, problems


def _visit(name: str, answers, found: Evaluation, stack: tuple, top: bool = False):
    """Count one record's terms (recursing into include/redirect); 'none' when it has no SPF."""
    answer = answers.get((name, "TXT"))
    if answer is None:
        found.wanted.add((name, "TXT"))
        return None
    if answer.unknown:
        found.unknown.append(f"{name} TXT ({answer.why})")
        return None
    records = spf_records(answer.records)
    if not records:
        return "none"
    found.visits += 1
    if top and found.record is None:
        found.record = records[0]  # a redirect's target stands in for `all`, not for the record
    if len(records) > 1:
        found.problems.append((ERROR, f"{name} publishes {len(records)} SPF records and "
                               "receivers treat that as an error: merge them into one."))
    terms, syntax = parse(records[0])
    for problem in syntax:
        found.problems.append((ERROR, f"The SPF record of {name} is invalid: {problem}; "
                               "receivers fail SPF for it: correct or remove it."))
    redirect = None
    for qualifier, term, argument in terms:
        if qualifier == "=":
            if term == "redirect":
                redirect = argument
            continue
        if term == "all" and top:
            found.all = ALL_WORDS[qualifier]
        if term in LOOKUP_MECHANISMS:
            found.lookups += 1
            _follow(term, _target(argument, name, stack[0]), answers, found, stack, name)
    if redirect and not any(t[1] == "all" for t in terms):
        found.lookups += 1
        target = _target(redirect, name, stack[0])
        if target is None:
            return "spf"   # a macro only the receiver can expand
        found.includes.append(target)
        child = _recurse(target, answers, found, stack, top)
        if child == "none":
            found.problems.append((ERROR, f"redirect={target} in the SPF record of {name} "
                                   "names a domain with no SPF record: point it at one."))
    return "spf"


def _follow(term, target, answers, found: Evaluation, stack: tuple, owner: str) -> None:
    if target is None:
        return  # a macro only the receiver can expand (the sender's IP or address)
    if term == "include":
        found.includes.append(target)
        if _recurse(target, answers, found, stack, False) == "none":
            found.void_lookups += _void(answers.get((target, "TXT")))
            found.problems.append((ERROR, f"include:{target} in the SPF record of {owner} names "
                                   "a domain with no SPF record, so receivers fail SPF: remove "
                                   "it or fix the target."))
    elif term == "mx":
        answer = _known(answers, found, (target, "MX"))
        if answer is not None and answer.found and len(answer.records) > MAX_MX_NAMES:
            found.problems.append((ERROR, f"mx:{target} in the SPF record of {owner} has "
                                   f"{len(answer.records)} MX hosts; receivers stop at "
                                   f"{MAX_MX_NAMES}: use ip4:/ip6: for them instead."))
        found.void_lookups += _void(answer)
    elif term == "a":
        ipv4 = _known(answers, found, (target, "A"))
        ipv6 = _known(answers, found, (target, "AAAA"))
        found.void_lookups += _void(ipv4) and _void(ipv6)
    elif term == "exists":
        found.void_lookups += _void(_known(answers, found, (target, "A")))
    elif term == "ptr":
        found.problems.append((WARNING, f"The SPF record of {owner} uses ptr, which is slow, "
                               "unreliable and deprecated (RFC 7208 5.5): list the addresses "
                               "with ip4:/ip6: instead."))


def _recurse(target: str, answers, found: Evaluation, stack: tuple, top: bool):
    if target in stack:
        found.problems.append((ERROR, f"The SPF record of {stack[-1]} includes {target}, which "
                               "leads back to itself: remove the loop."))
        return "loop"
    if found.visits >= MAX_RECORDS:
        return "spf"
    return _visit(target, answers, found, stack + (target,), top)


def _known(answers, found: Evaluation, key: tuple[str, str]) -> Answer | None:
    answer = answers.get(key)
    if answer is None:
        found.wanted.add(key)
    elif answer.unknown:
        found.unknown.append(f"{key[0]} {key[1]} ({answer.why})")
    return answer


def _void(answer: Answer | None) -> int:
    """1 when the answer was NXDOMAIN or no records (RFC 7208 4.6.4 void lookup)."""
    return int(answer is not None and answer.missing)


def _target(argument: str, current: str, sender_domain: str) -> str | None:
    """The domain a term names: its argument (macros %{d}, %{o} expanded) or the current one."""
    if not argument:
        return current
    unknowable = [m for m in _MACRO.findall(argument) if m.lower() not in ("d", "o")]
    if unknowable:
        return None
    expanded = _MACRO.sub(lambda m: current if m.group(1).lower() == "d" else sender_domain,
                          argument)
    return expanded.replace("%%", "%").replace("%_", " ").replace("%-", "%20") \
        .lower().rstrip(".")


def _all_gaps(domain: str, word: str | None) -> list[tuple[str, str]]:
    if word == "+all":
        return [(ERROR, f"The SPF record of {domain} ends in +all, which lets every server on "
                 "the internet pass SPF as you: end it with -all or ~all.")]
    if word == "?all":
        return [(WARNING, f"The SPF record of {domain} ends in ?all, which says nothing about "
                 "other servers: end it with -all (or ~all while you check your senders).")]
    if word is None:
        return [(WARNING, f"The SPF record of {domain} has no all mechanism, so other servers "
                 "get a neutral result: end it with -all (or ~all while you check).")]
    return []


def _valid_network(kind: str, text: str) -> bool:
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return network.version == (4 if kind == "ip4" else 6)
