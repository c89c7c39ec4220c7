"""Domain names: one normal form (lower-case ASCII, IDNA A-labels) and organizational domains.

Non-ASCII names are written by IDNA 2008 with UTS #46 mapping, non-transitional (the `idna`
package), as registries and browsers write them today: straße.de is xn--strae-oqa.de, its own
registrable domain, where Python's IDNA 2003 codec made it strasse.de, another one.
"""
import contextlib
import functools
import marshal
import os
import re
import sys

MAX_NAME = 253
MAX_LABEL = 63
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")
# The parsed Public Suffix List, cached on disk as Python caches bytecode: in __pycache__ beside
# this module, written unless bytecode writing is off, skipped where it cannot be written.
SUFFIX_CACHE = os.path.join(os.path.dirname(__file__), "__pycache__", "public_suffixes.marshal")


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
        ascii_name = text if text.isascii() else _idna_2008(text)
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


def _idna_2008(text: str) -> str:
    import idna     # on first use: reports carry ASCII names, which never need it
    return idna.encode(text, uts46=True, transitional=False).decode("ascii")


def renormalized(stored: str) -> str:
    """A stored name's normal form today: its A-labels read back (punycode) and the name
    normalized again; InvalidDomain when IDNA 2008 refuses it (a symbol IDNA 2003 took)."""
    try:
        labels = [label[4:].encode("ascii").decode("punycode") if label.startswith("xn--")
                  else label for label in stored.split(".")]
    except UnicodeError:
        raise InvalidDomain(f"{stored!r} has a label that is not punycode") from None
    return normalize(".".join(labels))


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
    """Loaded on first use, not at import: most commands never need it."""
    return load_public_suffixes(SUFFIX_CACHE, write=not sys.dont_write_bytecode)


def load_public_suffixes(cache: str, *, write: bool):
    """The Public Suffix List from the rules cached at `cache` when they were parsed by the
    installed library from its installed list, else parsed from the library's file (some 30
    times slower: docs/performance.md, Start-up) and, with write, cached there for the next
    process."""
    import publicsuffixlist
    fingerprint = _fingerprint(publicsuffixlist)
    try:
        with open(cache, "rb") as file:
            cached_fingerprint, maxlabel, rules = marshal.loads(file.read())
    except (OSError, EOFError, ValueError, TypeError):
        cached_fingerprint = None                   # no cache yet, or not one of ours
    if cached_fingerprint == fingerprint:
        # The library's own parse, kept: the same version wrote these two fields.
        suffixes = publicsuffixlist.PublicSuffixList(source=[])
        suffixes._publicsuffix, suffixes._maxlabel = rules, maxlabel
        return suffixes
    parsed = publicsuffixlist.PublicSuffixList()
    if write:
        _save(cache, fingerprint, parsed)
    return parsed


def _fingerprint(library) -> str:
    """What cached rules were parsed by and from: the library's version and its list file."""
    info = os.stat(library.PSLFILE)
    return f"publicsuffixlist {library.__version__} {info.st_size} {info.st_mtime_ns}"


def _save(cache: str, fingerprint: str, parsed) -> None:
    """Write the parsed rules for the next process; a place that cannot be written is skipped."""
    fields = (getattr(parsed, "_maxlabel", None), getattr(parsed, "_publicsuffix", None))
    if None in fields:                               # a library that keeps them elsewhere
        return
    temporary = f"{cache}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(temporary, "wb") as file:
            marshal.dump((fingerprint, *fields), file)
        os.replace(temporary, cache)                 # whole or not at all, for a reader beside
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(temporary)
