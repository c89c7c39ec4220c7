"""A real authoritative DNS server on 127.0.0.1 (UDP and TCP, one port) for the tests.

Zones are zone-file text per origin; a name outside them is NXDOMAIN (NODATA for a parent of one,
as under the root). Faults are injected by name and hold for the names under it:
`servfail`, `refused`, `silent` (never answers), `truncate` (UDP answer with TC, the full one
over TCP), `authenticated` (sets the AD bit, standing in for a validating resolver), `nxdomain`
(says the name does not exist, as a broken or captive resolver does of every name).
"""
from __future__ import annotations

import socket
import struct
import textwrap
import threading

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype
import dns.rrset
import dns.zone

FAULTS = frozenset({"servfail", "refused", "silent", "truncate", "authenticated", "nxdomain"})
FAULT_RCODES = {"servfail": dns.rcode.SERVFAIL, "refused": dns.rcode.REFUSED,
                "nxdomain": dns.rcode.NXDOMAIN}
DEFAULT_HEAD = ("$TTL 300\n@ IN SOA ns.{origin}. hostmaster.{origin}. 1 3600 600 86400 300\n"
                "@ IN NS ns.{origin}.\n")
MAX_CNAME_HOPS = 8


class DNSServer:
    """Serves the zones it is given until stop(); records every question it receives."""

    def __init__(self):
        self.zones: dict[dns.name.Name, dns.zone.Zone] = {}
        self._existing: dict[dns.name.Name, set[dns.name.Name]] = {}
        self.faults: dict[dns.name.Name, str] = {}
        self.queries: list[tuple[str, str, str]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._udp, self._tcp = _bind_pair()
        self.port = self._udp.getsockname()[1]
        self._threads = [threading.Thread(target=self._serve_udp, daemon=True),
                         threading.Thread(target=self._serve_tcp, daemon=True)]

    def start(self) -> "DNSServer":
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout=2)
        self._udp.close()
        self._tcp.close()

    def reset(self) -> None:
        with self._lock:
            self.zones.clear()
            self._existing.clear()
            self.faults.clear()
            self.queries.clear()

    def zone(self, origin: str, text: str = "") -> None:
        """Serve `text` (zone-file lines, names relative to origin); SOA and NS added if absent."""
        name = dns.name.from_text(origin)
        head = "" if " SOA " in text.upper() else DEFAULT_HEAD.format(origin=origin.rstrip("."))
        zone = dns.zone.from_text(head + _dedent(text), origin=name, relativize=False)
        # Every name that exists, empty non-terminals included, so a miss costs one set look-up.
        existing = {parent for owner in zone.nodes for parent in _self_and_parents(owner)
                    if parent.is_subdomain(name)}
        with self._lock:
            self.zones[name] = zone
            self._existing[name] = existing

    def fault(self, name: str, fault: str) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r} (known: {', '.join(sorted(FAULTS))})")
        with self._lock:
            self.faults[dns.name.from_text(name)] = fault

    def asked(self, name: str | None = None, rdtype: str | None = None) -> list[tuple]:
        """The questions received (name, type, transport), optionally only those matching."""
        with self._lock:
            seen = list(self.queries)
        wanted = name and str(dns.name.from_text(name)).lower()
        return [q for q in seen
                if (not wanted or q[0] == wanted) and (not rdtype or q[1] == rdtype)]

    # Serving

    def _serve_udp(self) -> None:
        while not self._stopping.is_set():
            try:
                wire, peer = self._udp.recvfrom(65535)
            except (socket.timeout, OSError):
                continue
            reply = self._reply(wire, "udp")
            if reply is not None:
                self._udp.sendto(reply, peer)

    def _serve_tcp(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._tcp.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._serve_connection, args=(conn,), daemon=True).start()

    def _serve_connection(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                while not self._stopping.is_set():
                    head = _read_exactly(conn, 2)
                    if head is None:
                        return
                    wire = _read_exactly(conn, struct.unpack("!H", head)[0])
                    if wire is None:
                        return
                    reply = self._reply(wire, "tcp")
                    if reply is None:
                        return
                    conn.sendall(struct.pack("!H", len(reply)) + reply)
            except OSError:
                return

    def _reply(self, wire: bytes, transport: str) -> bytes | None:
        try:
            query = dns.message.from_wire(wire)
            question = query.question[0]
        except (dns.exception.DNSException, IndexError):
            return None
        qname, rdtype = question.name, question.rdtype
        with self._lock:
            self.queries.append((str(qname).lower(), dns.rdatatype.to_text(rdtype), transport))
            fault = self._fault_for(qname)
        if fault == "silent":
            return None
        response = dns.message.make_response(query)
        if fault in ("servfail", "refused", "nxdomain"):
            response.set_rcode(FAULT_RCODES[fault])
            return response.to_wire()
        if fault == "truncate" and transport == "udp":
            response.flags |= dns.flags.TC
            return response.to_wire()
        with self._lock:
            self._answer(response, qname, rdtype)
        if fault == "authenticated":
            response.flags |= dns.flags.AD
        if transport == "udp":
            limit = query.payload if query.edns >= 0 else 512
            try:
                return response.to_wire(max_size=limit)
            except dns.exception.TooBig:
                truncated = dns.message.make_response(query)
                truncated.flags |= dns.flags.TC
                return truncated.to_wire()
        return response.to_wire(max_size=65535)  # the query's EDNS payload limits UDP only

    def _fault_for(self, qname: dns.name.Name) -> str | None:
        for name in _self_and_parents(qname):
            if name in self.faults:
                return self.faults[name]
        return None

    def _zone_for(self, qname: dns.name.Name) -> dns.zone.Zone | None:
        for name in _self_and_parents(qname):
            if name in self.zones:
                return self.zones[name]
        return None

    def _answer(self, response: dns.message.Message, qname: dns.name.Name, rdtype) -> None:
        """Authoritative answer, following CNAMEs through the zones served."""
        zone = self._zone_for(qname)
        if zone is None:
            # As the root would: a parent of a zone served exists (no data), anything else not.
            if qname != dns.name.root and not any(origin.is_subdomain(qname)
                                                  for origin in self.zones):
                response.set_rcode(dns.rcode.NXDOMAIN)
            return
        response.flags |= dns.flags.AA
        for _ in range(MAX_CNAME_HOPS):
            rdatasets = _rdatasets(zone, self._existing[zone.origin], qname)
            if rdatasets is None:
                response.set_rcode(dns.rcode.NXDOMAIN)
                break
            wanted = rdatasets.get(rdtype)
            if wanted is not None:
                response.answer.append(dns.rrset.from_rdata_list(qname, wanted.ttl, wanted))
                return
            cname = rdatasets.get(dns.rdatatype.CNAME)
            if cname is None:
                break  # NODATA: the name exists, the type does not
            response.answer.append(dns.rrset.from_rdata_list(qname, cname.ttl, cname))
            qname = cname[0].target
            zone = self._zone_for(qname)
            if zone is None:
                return  # the chain leaves our zones: a resolver would ask elsewhere
        soa = zone.find_rdataset(zone.origin, dns.rdatatype.SOA)
        response.authority.append(dns.rrset.from_rdata_list(zone.origin, soa.ttl, soa))


def _rdatasets(zone: dns.zone.Zone, existing: set, qname: dns.name.Name) -> dict | None:
    """Type -> rdataset at qname (wildcards synthesised); {} for an empty non-terminal;
    None when the name does not exist."""
    node = zone.get_node(qname)
    if node is not None:
        return {rds.rdtype: rds for rds in node.rdatasets}
    if qname in existing:
        return {}
    # RFC 4592: the wildcard child of the closest encloser stands in for a missing name.
    encloser = qname.parent()
    while encloser not in existing:
        encloser = encloser.parent()
    wildcard = zone.get_node(dns.name.Name((b"*",) + encloser.labels))
    if wildcard is None:
        return None
    return {rds.rdtype: rds for rds in wildcard.rdatasets}


def _self_and_parents(name: dns.name.Name):
    while True:
        yield name
        if name == dns.name.root:
            return
        name = name.parent()


def _bind_pair() -> tuple[socket.socket, socket.socket]:
    """A UDP and a TCP socket on the same free port of 127.0.0.1."""
    for _ in range(50):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind(("127.0.0.1", udp.getsockname()[1]))
        except OSError:
            udp.close()
            tcp.close()
            continue
        tcp.listen(64)
        udp.settimeout(0.2)
        tcp.settimeout(0.2)
        return udp, tcp
    raise RuntimeError("no free port for both UDP and TCP on 127.0.0.1")


def _read_exactly(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _dedent(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"
