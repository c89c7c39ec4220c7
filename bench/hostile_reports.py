"""Hostile reports for bench/hostile.py (issue 34), each beside a real-shaped report of about the
same decompressed size: TLS reports of a million policies or 300,000 result types, padded with
60 MB of spaces, holding NaN or forged counts; aggregate reports of 600,000 <dkim> results in
one record or of a forged count. Every builder writes one file into folder and returns its path.
"""
from __future__ import annotations

import gzip
import json
import pathlib

from tests.ingest import tlsbuild as tb
from tests.ingest import xmlbuild as xb

MB = 1 << 20
# The largest real-shaped TLS report the default caps let through: RUA_MAX_TLS_VALUES (10**6)
# holds about 125,000 failure details of 8 values each.
TLS_NORMAL_MAX = 20 * MB


def _write(folder: pathlib.Path, name: str, data: bytes) -> pathlib.Path:
    path = folder / name
    path.write_bytes(gzip.compress(data, compresslevel=6, mtime=0) if name.endswith(".gz")
                     else data)
    return path


def tls_policies(folder: pathlib.Path, name: str, domain: str = "example.com",
                 count: int = 1_000_000) -> pathlib.Path:
    """count policies, each the smallest a reader still counts (a domain and an empty summary)."""
    head, tail = json.dumps(tb.report([{"@": 0}], start="2026-08-01T00:00:00Z"),
                            separators=(",", ":")).split('{"@":0}')
    entry = json.dumps({"policy": {"policy-domain": domain}, "summary": {}},
                       separators=(",", ":"))
    return _write(folder, f"{name}.json.gz", (head + ",".join([entry] * count) + tail).encode())


def tls_result_types(folder: pathlib.Path, name: str, count: int = 300_000) -> pathlib.Path:
    """One policy whose failure details name count distinct result types."""
    failures = {f"x-type-{n}": 1 for n in range(count)}
    document = tb.report([tb.policy(failed=count, failures=failures)])
    return _write(folder, f"{name}.json.gz", json.dumps(document).encode())


def tls_padded(folder: pathlib.Path, name: str, padding: int = 60 * MB) -> pathlib.Path:
    """A real report followed by `padding` spaces (61 KB gzipped)."""
    return _write(folder, f"{name}.json.gz", tb.report_bytes() + b" " * padding)


def tls_nan(folder: pathlib.Path, name: str) -> pathlib.Path:
    data = tb.report_bytes(indent=None)[:-1] + b',"x":[NaN,Infinity]}'
    return _write(folder, f"{name}.json", data)


def tls_counts(folder: pathlib.Path, name: str) -> pathlib.Path:
    return _write(folder, f"{name}.json", tb.report_bytes([tb.policy(successful=2 ** 62)]))


def tls_normal(folder: pathlib.Path, name: str, size: int) -> pathlib.Path:
    """A real-shaped TLS report of about min(size, TLS_NORMAL_MAX) bytes: policies of up to
    1,000 failure details from distinct sending MTAs, the RFC's result types."""
    size = min(size, TLS_NORMAL_MAX)
    kinds = ["certificate-expired", "starttls-not-supported", "validation-failure"]
    policies, written, n = [], 0, 0
    while written < size:
        details = []
        for _ in range(1000):
            detail = {"result-type": kinds[n % 3], "sending-mta-ip": f"10.{n >> 16 & 255}."
                      f"{n >> 8 & 255}.{n & 255}", "receiving-mx-hostname": "mx1.example.com",
                      "receiving-ip": "192.0.2.25", "failed-session-count": 1 + n % 5}
            details.append(detail)
            written, n = written + 190, n + 1
            if written >= size:
                break
        failed = sum(d["failed-session-count"] for d in details)
        entry = tb.policy("example.com", 10_000, failed, None,
                          **{"policy-string": ["version: STSv1", "mode: enforce",
                                               "mx: mx1.example.com", "max_age: 86400"],
                             "mx-host": ["mx1.example.com"]})
        entry["failure-details"] = details
        policies.append(entry)
    document = tb.report(policies, report_id=name)
    return _write(folder, f"{name}.json", json.dumps(document, indent=1).encode())


def dmarc_auth(folder: pathlib.Path, name: str, count: int = 600_000) -> pathlib.Path:
    """One <record> holding count <dkim> results."""
    return _write(folder, f"{name}.xml.gz", xb.auth_flood(count, report_id=name))


def dmarc_counts(folder: pathlib.Path, name: str) -> pathlib.Path:
    records = [xb.record(count=2 ** 62), xb.record(source_ip="192.0.2.2", count=2 ** 62)]
    return _write(folder, f"{name}.xml", xb.report_bytes(records, report_id=name))


def decompressed_size(path: pathlib.Path) -> int:
    data = path.read_bytes()
    return len(gzip.decompress(data)) if path.suffix == ".gz" else len(data)
