"""Domain names: one normal form (lower-case ASCII, IDNA A-labels) and organizational domains."""
import functools
import re

MAX_NAME = 253
MAX_LABEL = 63
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")


class InvalidDomain(ValueError):
    """Not a syntactically valid host name."""


def normalize(name: str) -> str:
    """Lower-case ASCII form of a domain name; raises InvalidDomain when it is not one."""
    if not isinstance(name, str):
        raise InvalidDomain("not text")
    text = name.strip().rstrip(".").lower()
    if not text or len(text) > MAX_NAME * 4:
        raise InvalidDomain(f"{name!r} is not a domain name")
    try:
        ascii_name = text if text.isascii() else text.encode("idna").decode("ascii")
    except UnicodeError:
        raise InvalidDomain(f"{name!r} is not a valid internationalized domain name") from None
    labels = ascii_name.split(".")
    if len(ascii_name) > MAX_NAME or len(labels) < 2:
        raise InvalidDomain(f"{name!r} is not a fully qualified domain name")
    for label in labels:
        if not _LABEL.match(label):
            raise InvalidDomain(f"{name!r} has an invalid label {label[:MAX_LABEL]!r}")
    if labels[-1].isdigit():
        raise InvalidDomain(f"{name!r} looks like an address, not a domain name")
    return ascii_name


def is_valid(name: str) -> bool:
    try:
        normalize(name)
    except InvalidDomain:
        return False
    return True


@functools.lru_cache(maxsize=65536)
def organizational_domain(name: str) -> str:
    """The registrable domain by the Public Suffix List (a public suffix stands for itself)."""
    name = name.lower().rstrip(".")
    return _public_suffix_list().privatesuffix(name) or name


@functools.cache
def _public_suffix_list():
    """Parsed on first use, not at import: it costs about 25 ms that most commands never need."""
    from publicsuffixlist import PublicSuffixList
    return PublicSuffixList()
