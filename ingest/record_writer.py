"""A report's records, written as they stream: aligned, classified and inserted 500 at a time."""
from __future__ import annotations

from typing import NamedTuple

from rules.alignment import dmarc_pass, failure_summary, record_alignment
from rules.verdicts import AUTHENTICATED, UNKNOWN_SENDER, Sender, classify_record, sender
from ingest.model import ReportError
from ingest.rollups import ReportTally
from store.addresses import canonical_ip
from store import compiled as sql
from store.models import Record
from store.source_queries import enrichment

BATCH = 500
MAX_COUNT = 2**62          # per record and in total: far above any real report, inside BIGINT
ALIGNMENT_CACHE = 4096     # distinct (From, auth domains) shapes remembered per report
MAX_SELECTORS = 100        # per domain: enough for any real signer, bounded against hostile input


class RecordRow(NamedTuple):
    """One row of the records table as its insert takes it (JSON columns already text)."""
    report: str
    org: str
    ordinal: int
    source_ip: str
    count: int
    disposition: str
    dkim: str
    spf: str
    reasons: str
    envelope_to: str
    envelope_from: str
    header_from: str
    auth_dkim: str
    auth_spf: str
    alignment: str
    classification: str


RECORD_FIELDS = [getattr(Record, name) for name in RecordRow._fields]
_TEXT = ("source_ip", "disposition", "dkim", "spf", "envelope_to", "envelope_from", "header_from")
_LIMITS = {name: getattr(Record, name).max_length for name in _TEXT}   # longer ones are cut


class RecordWriter:
    """Counts, per-IP sums and DKIM selectors of one report, gathered while its records go in.
    keep_last: the last batch's rows are kept in `kept`, not written, for the commit group to
    write with other reports' (ingest/shared_rows.py); a report of one batch writes nothing."""

    def __init__(self, report, domain: str, fit, keep_last: bool = False):
        self.report, self.domain, self.fit = report, domain, fit
        self.keep_last, self.kept = keep_last, []
        self.tally, self.selectors = ReportTally(), set()
        self.summary = {"spf_only": 0, "dkim_only": 0, "both": 0, "total": 0}
        self.records = self.messages = self.compliant = 0
        self.pending = []
        self._alignments: dict[tuple, tuple[dict, str]] = {}
        self._signers: set[tuple] = set()   # (selector, domain) pairs _collect_selectors has read

    def write_all(self, records):
        for record in records:
            if not 0 <= record.count <= MAX_COUNT:
                raise ReportError(f"record {self.records + 1}: count {record.count} is out of range")
            self.records += 1
            self.messages += record.count
            if self.messages > MAX_COUNT:
                raise ReportError("message counts add up beyond any real report")
            self.pending.append(record)
            if len(self.pending) >= BATCH:
                self.flush()
        self.flush(last=True)
        if not self.records:
            raise ReportError("the report holds no <record>")

    def flush(self, last: bool = False):
        if not self.pending:
            return
        report, start = self.report, self.records - len(self.pending)
        # What is known of a sender decides only records that fail DMARC: a batch of passing
        # ones (two reports in three of the corpus) reads nothing.
        senders = known_senders(report.org_id, {r.source_ip for r in self.pending
                                                if not dmarc_pass(r.dkim, r.spf)})
        rows = []
        report_id, org_id, adkim, aspf = report.id, report.org_id, report.adkim, report.aspf
        as_json = Record.auth_dkim.db_value
        ip_max, disposition_max, dkim_max, spf_max, to_max, from_max, header_max = (
            _LIMITS[name] for name in _TEXT)
        for ordinal, record in enumerate(self.pending, start):
            alignment, alignment_json = self._alignment(record, adkim, aspf)
            # A DMARC pass is classify's first rule (authenticated).
            passed = dmarc_pass(record.dkim, record.spf)
            if passed:
                verdict = AUTHENTICATED
            else:
                source = senders.get(record.source_ip, UNKNOWN_SENDER)
                verdict = classify_record(record, alignment, source)
            source_ip, disposition = record.source_ip, record.disposition
            dkim, spf = record.dkim, record.spf
            envelope_to, envelope_from = record.envelope_to, record.envelope_from
            header_from = record.header_from
            try:
                fits = (len(source_ip) <= ip_max and len(disposition) <= disposition_max
                        and len(dkim) <= dkim_max and len(spf) <= spf_max
                        and len(envelope_to) <= to_max and len(envelope_from) <= from_max
                        and len(header_from) <= header_max)
            except TypeError:       # None: fit makes it ""
                fits = False
            if not fits:
                fitted = self.fit(Record, {name: getattr(record, name) for name in _TEXT})
                source_ip, disposition = fitted["source_ip"], fitted["disposition"]
                dkim, spf = fitted["dkim"], fitted["spf"]
                envelope_to, envelope_from = fitted["envelope_to"], fitted["envelope_from"]
                header_from = fitted["header_from"]
            rows.append(RecordRow(
                report=report_id, org=org_id, ordinal=ordinal, source_ip=source_ip,
                count=record.count, disposition=disposition, dkim=dkim, spf=spf,
                reasons=as_json(record.reasons), envelope_to=envelope_to,
                envelope_from=envelope_from, header_from=header_from,
                auth_dkim=as_json(record.auth_dkim), auth_spf=as_json(record.auth_spf),
                alignment=alignment_json, classification=verdict))
            self.tally.add(source_ip, record.count, record.dkim, record.spf, verdict, disposition)
            if passed:
                self.compliant += record.count
            self._collect_selectors(record.auth_dkim)
        if last and self.keep_last:
            self.kept = rows
        else:
            sql.insert_rows(Record, RECORD_FIELDS, rows, converted=True)
        for name, value in failure_summary(self.pending).items():
            self.summary[name] = self.summary.get(name, 0) + value
        self.pending = []

    def _alignment(self, record, adkim: str, aspf: str) -> tuple[dict, str]:
        """record_alignment and its JSON, computed once per From domain and auth domains."""
        spf, dkim = record.auth_spf, record.auth_dkim
        key = (record.header_from, None if spf is None else tuple([r.get("Domain") for r in spf]),
               None if dkim is None else tuple([r.get("Domain") for r in dkim]))
        found = self._alignments.get(key)
        if found is None:
            alignment = record_alignment(record, adkim, aspf)
            found = (alignment, Record.alignment.db_value(alignment))
            if len(self._alignments) < ALIGNMENT_CACHE:
                self._alignments[key] = found
        return found

    def _collect_selectors(self, auth_dkim):
        """Selectors of signatures made with the policy domain itself (d= exactly the domain)."""
        if not auth_dkim or len(self.selectors) >= MAX_SELECTORS:
            return
        seen = self._signers
        for entry in auth_dkim:
            signer = (entry.get("Selector"), entry.get("Domain"))
            if signer in seen:      # taken or turned down already: the same answer again
                continue
            if len(seen) < ALIGNMENT_CACHE:
                seen.add(signer)
            selector = (signer[0] or "").strip().lower()
            if (selector and len(selector) <= 253 and len(self.selectors) < MAX_SELECTORS
                    and (signer[1] or "").strip().lower().rstrip(".") == self.domain):
                self.selectors.add(selector)


def known_senders(org_id: str, ips) -> dict[str, Sender]:
    """What enrichment has recorded of these IPs (Source rows, by the addresses' canonical
    text); an IP not there, or not enriched yet, is unknown."""
    spelled = {ip: canonical_ip(ip) for ip in ips}
    wanted = sorted(set(spelled.values()))
    if not wanted:
        return {}
    known = {ip: sender(kind, status) for ip, kind, status in enrichment(org_id, wanted)}
    return {ip: known[canonical] for ip, canonical in spelled.items() if canonical in known}
