"""The report detail shape: the reporter's own field names, epoch integers in DateRange."""
from __future__ import annotations

from types import SimpleNamespace

import orjson
from orjson import Fragment

from ingest.record_writer import sender_of
from sources import verdicts


def _json(text):
    """A stored JSON column, passed through without parsing (None stays null)."""
    return None if text is None else Fragment(text)


def report_detail(report: tuple, records) -> dict:
    """GET /reports/{id} from a queries.DETAIL_COLUMNS tuple and RECORD_COLUMNS tuples."""
    (version, org_name, email, extra_contact_info, report_id, date_begin, date_end, errors,
     generator, domain, adkim, aspf, p, sp, np, pct, fo, testing, psd, discovery_method,
     parse_warnings, failure_summary) = report
    shaped, classifications, alignments, evidence = [], [], [], []
    explained: dict = {}
    for (source_ip, count, disposition, dkim, spf, reasons, envelope_to, envelope_from,
         header_from, auth_dkim, auth_spf, alignment, classification, *sender) in records:
        shaped.append({
            "Row": {"SourceIP": source_ip, "Count": count,
                    "PolicyEvaluated": {"Disposition": disposition, "DKIM": dkim, "SPF": spf,
                                        "Reason": _json(reasons)}},
            "Identifiers": {"EnvelopeTo": envelope_to, "EnvelopeFrom": envelope_from,
                            "HeaderFrom": header_from},
            "AuthResults": {"DKIM": _json(auth_dkim), "SPF": _json(auth_spf)},
        })
        classifications.append(classification)
        alignments.append(_json(alignment))
        key = (dkim, spf, reasons, auth_dkim, auth_spf, alignment, tuple(sender))
        if key not in explained:   # records of one sender and outcome share their evidence
            explained[key] = _evidence(*key)
        evidence.append(explained[key])
    return {
        "Version": version,
        "ReportMetadata": {
            "OrgName": org_name, "Email": email, "ExtraContactInfo": extra_contact_info,
            "ReportID": report_id, "DateRange": {"Begin": date_begin, "End": date_end},
            "Errors": _json(errors), "Generator": generator,
        },
        "PolicyPublished": {
            "Domain": domain, "ADKIM": adkim, "ASPF": aspf, "P": p, "SP": sp, "NP": np,
            "PCT": pct, "FO": fo, "T": testing, "PSD": psd, "DiscoveryMethod": discovery_method,
        },
        "Records": shaped,
        "parse_warnings": _json(parse_warnings),
        "record_classifications": classifications,
        "record_evidence": evidence,
        "record_alignment": alignments,
        "failure_summary": _json(failure_summary),
    }


def _evidence(dkim, spf, reasons, auth_dkim, auth_spf, alignment, sender) -> dict:
    """The rule that classified a record and its facts, with the sender its verdict used
    (the Source row's slug, kind, abuse status and name; None when there is no row)."""
    record = SimpleNamespace(dkim=dkim, spf=spf, reasons=_loads(reasons),
                             auth_dkim=_loads(auth_dkim), auth_spf=_loads(auth_spf))
    slug, kind, status, name = sender or (None, None, None, None)
    found = sender_of(slug, kind, status)
    return verdicts.explain_record(record, _loads(alignment), verdicts.Sender(
        found.kind, found.reputation, name if slug else None))


def _loads(text):
    return None if text is None else orjson.loads(text)
