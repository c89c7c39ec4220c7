"""The report detail shape: the reporter's own field names, epoch integers in DateRange."""
from __future__ import annotations

from orjson import Fragment


def _json(text):
    """A stored JSON column, passed through without parsing (None stays null)."""
    return None if text is None else Fragment(text)


def report_detail(report: tuple, records) -> dict:
    """GET /reports/{id} from a queries.DETAIL_COLUMNS tuple and RECORD_COLUMNS tuples."""
    (version, org_name, email, extra_contact_info, report_id, date_begin, date_end, errors,
     generator, domain, adkim, aspf, p, sp, np, pct, fo, testing, psd, discovery_method,
     parse_warnings, failure_summary) = report
    shaped, classifications, alignments = [], [], []
    for (source_ip, count, disposition, dkim, spf, reasons, envelope_to, envelope_from,
         header_from, auth_dkim, auth_spf, alignment, classification) in records:
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
        "record_alignment": alignments,
        "failure_summary": _json(failure_summary),
    }
