"""ULIDs: 26 characters of Crockford Base32, time-ordered, used for every public id."""
import secrets
import time

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_VALID = frozenset(CROCKFORD)


def encode(number: int, length: int) -> str:
    """Crockford Base32 of a non-negative integer, left-padded to length characters."""
    chars = []
    for _ in range(length):
        number, digit = divmod(number, 32)
        chars.append(CROCKFORD[digit])
    return "".join(reversed(chars))


def new_ulid(at: float | None = None) -> str:
    """A new ULID: 48 bits of milliseconds then 80 random bits."""
    millis = int((time.time() if at is None else at) * 1000)
    return encode((millis << 80) | secrets.randbits(80), 26)


def normalize_ulid(text: str) -> str | None:
    """The canonical upper-case ULID, or None when text is not one (lower case is accepted)."""
    if not isinstance(text, str) or len(text) != 26:
        return None
    up = text.upper()
    # The first character holds only 3 bits: anything above 7 overflows 128 bits.
    if up[0] > "7" or not _VALID.issuperset(up):
        return None
    return up
