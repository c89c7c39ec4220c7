"""The report detail shape: the reporter's own field names, epoch integers in DateRange."""
from __future__ import annotations


def report_detail(report, records) -> dict:
    """GET /reports/{id}: a Report row and its RECORD_COLUMNS tuples, in the reporter's order."""
    shaped, classifications, alignments = [], [], []
    for (source_ip, count, disposition, dkim, spf, reasons, envelope_to, envelope_from,
         header_from, auth_dkim, auth_spf, alignment, classification) in records:
        shaped.append({
            "Row": {"SourceIP": source_ip, "Count": count,
                    "PolicyEvaluated": {"Disposition": disposition, "DKIM": dkim, "SPF": spf,
                                        "Reason": reasons}},
            "Identifiers": {"EnvelopeTo": envelope_to, "EnvelopeFrom": envelope_from,
                            "HeaderFrom": header_from},
            "AuthResults": {"DKIM": auth_dkim, "SPF": auth_spf},
        })
        classifications.append(classification)
        alignments.append({"spf": alignment.get("spf"), "dkim": alignment.get("dkim")})
    return {
        "Version": report.version,
        "ReportMetadata": {
            "OrgName": report.org_name, "Email": report.email,
            "ExtraContactInfo": report.extra_contact_info, "ReportID": report.report_id,
            "DateRange": {"Begin": report.date_begin, "End": report.date_end},
            "Errors": report.errors, "Generator": report.generator,
        },
        "PolicyPublished": {
            "Domain": report.domain, "ADKIM": report.adkim, "ASPF": report.aspf, "P": report.p,
            "SP": report.sp, "NP": report.np, "PCT": report.pct, "FO": report.fo,
            "T": report.testing, "PSD": report.psd, "DiscoveryMethod": report.discovery_method,
        },
        "Records": shaped,
        "parse_warnings": report.parse_warnings,
        "record_classifications": classifications,
        "record_alignment": alignments,
        "failure_summary": report.failure_summary,
    }
