"""Bytes within a size cap (SpooledBytes) and the two compressed containers, gzip and zip,
read as streams."""
from __future__ import annotations

import io
import os
import struct
import tempfile
import weakref
import zipfile
import zlib
from typing import BinaryIO, Iterable, Iterator

CHUNK = 64 * 1024
IN_MEMORY = 4 * 1024 * 1024      # larger contents spill to a temporary file


class TooLarge(ValueError):
    """More bytes than the cap: refused while reading, before memory or disk fill up."""


class BudgetSpent(TooLarge):
    """The input file's whole budget is spent: nothing more of it is opened."""


class Budget:
    """What one input file may cost across all its archive levels: bytes decompressed and
    members opened (zip members and gzip streams). None: no limit."""

    def __init__(self, max_bytes: int | None = None, max_members: int | None = None):
        self.max_bytes, self.max_members = max_bytes, max_members
        self.spent_bytes = self.opened = 0
        self.spent = False

    def open(self, declared: int = 0) -> None:
        """One more member, whose declared size is refused at once if it would pass the budget."""
        self.opened += 1
        if self.max_members is not None and self.opened > self.max_members:
            self._refuse(f"more than {self.max_members} archive members in one input file "
                         f"(RUA_MAX_MEMBERS)")
        self._check(self.spent_bytes + declared, "declares")

    def spend(self, size: int) -> None:
        self.spent_bytes += size
        self._check(self.spent_bytes, "decompresses to")

    def _check(self, total: int, verb: str) -> None:
        if self.max_bytes is not None and total > self.max_bytes:
            self._refuse(f"the input file {verb} more than {self.max_bytes} bytes in all "
                         f"(RUA_MAX_INPUT_BYTES)")

    def _refuse(self, reason: str):
        self.spent = True
        raise BudgetSpent(f"{reason}; the rest of it is not read")


class Unreadable(ValueError):
    """A container whose bytes are broken (truncated, corrupt); the message says how."""


class SpooledBytes:
    """Bytes already read within the cap: in memory when small, else a temporary file."""

    def __init__(self, data: bytes | None = None, path: str | None = None, *, owned: bool = False):
        self._data = data
        self._path = path
        if path is not None and owned:
            # The file lives as long as any Document that can still open it.
            weakref.finalize(self, _unlink, path)

    @classmethod
    def of_file(cls, path: str) -> "SpooledBytes":
        return cls(path=path)

    def open(self) -> BinaryIO:
        """A fresh binary stream positioned at the start."""
        if self._data is not None:
            return io.BytesIO(self._data)
        return open(self._path, "rb")

    def head(self, size: int = 4096) -> bytes:
        if self._data is not None:
            return self._data[:size]
        with open(self._path, "rb") as stream:
            return stream.read(size)

    def read(self) -> bytes:
        if self._data is not None:
            return self._data
        with open(self._path, "rb") as stream:
            return stream.read()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def spool(chunks: Iterable[bytes], max_bytes: int, budget: Budget | None = None) -> SpooledBytes:
    """Collect chunks into a SpooledBytes, raising TooLarge as soon as they pass max_bytes (or the
    budget they are charged to)."""
    parts: list[bytes] = []
    size = 0
    spill = None
    try:
        for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(f"larger than the {max_bytes}-byte limit once decompressed")
            if budget is not None:
                budget.spend(len(chunk))
            if spill is None:
                parts.append(chunk)
                if size > IN_MEMORY:
                    spill = tempfile.NamedTemporaryFile(prefix="rua-", suffix=".part", delete=False)
                    spill.write(b"".join(parts))
                    parts = []
            else:
                spill.write(chunk)
    except BaseException:
        if spill is not None:
            spill.close()
            _unlink(spill.name)
        raise
    if spill is None:
        return SpooledBytes(b"".join(parts))
    spill.close()
    return SpooledBytes(path=spill.name, owned=True)


def read_stream(stream: BinaryIO) -> Iterator[bytes]:
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return
        yield chunk


def gunzip(blob: SpooledBytes) -> Iterator[bytes]:
    """Decompressed chunks of gzip data; members in sequence, stray bytes after the end ignored."""
    decoder = _gzip_decoder()
    with blob.open() as stream:
        for raw in read_stream(stream):
            pending = raw
            while True:
                try:
                    out = decoder.decompress(pending, CHUNK)
                except zlib.error as exc:
                    raise Unreadable(f"corrupt gzip data ({_zlib_reason(exc)})") from None
                if out:
                    yield out
                if decoder.eof:
                    pending = decoder.unused_data
                    if not pending:
                        break
                    if not pending.startswith(b"\x1f\x8b"):
                        return  # stray bytes after the data (some mailers add a CRLF): ignored
                    decoder = _gzip_decoder()
                    continue
                pending = decoder.unconsumed_tail
                if not pending and len(out) < CHUNK:
                    break
    if not decoder.eof:
        raise Unreadable("truncated gzip data (it ends before the gzip trailer)")


def _gzip_decoder():
    return zlib.decompressobj(16 + zlib.MAX_WBITS)


def _zlib_reason(exc: zlib.error) -> str:
    text = str(exc)
    return text.split(": ", 1)[-1] if ": " in text else text


def zip_members(blob: SpooledBytes,
                budget: Budget | None = None) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(name, chunks) for each file in a zip; directories and macOS resource forks are skipped.
    Each member is charged to budget (its declared size first) when its chunks are read."""
    stream = blob.open()
    try:
        try:
            archive = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, IndexError, struct.error,
                NotImplementedError) as exc:
            raise Unreadable(f"corrupt zip archive ({exc})") from None
        with archive:
            members = [info for info in archive.infolist() if _is_document(info)]
            if not members:
                raise Unreadable("zip archive holds no files")
            for info in members:
                yield info.filename or "(unnamed member)", _member_chunks(archive, info, budget)
    finally:
        stream.close()


def _is_document(info: zipfile.ZipInfo) -> bool:
    name = info.filename
    base = name.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith("/") or name.startswith("__MACOSX/") or "/__MACOSX/" in name:
        return False
    return not base.startswith("._")


def _member_chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo,
                   budget: Budget | None) -> Iterator[bytes]:
    if budget is not None:
        budget.open(info.file_size)
    try:
        with archive.open(info) as member:
            yield from read_stream(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, IndexError, struct.error) as exc:
        raise Unreadable(f"corrupt zip member ({exc})") from None
    except NotImplementedError as exc:
        raise Unreadable(f"unsupported zip member ({exc})") from None
    except RuntimeError as exc:  # encrypted members
        raise Unreadable(f"unreadable zip member ({exc})") from None
