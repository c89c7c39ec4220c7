"""GET /sources and /sources/{ip}: sending IPs with their totals and what enrichment knows."""
from __future__ import annotations

from flask import Blueprint, Response, g, request

from store import source_queries as queries
from store.addresses import canonical_ip
from store.encoding import dumps
from webapp import params
from webapp.auth import requires
from webapp.errors import ApiError
from webapp.answer_cache import remember
from webapp.paging import envelope
from rules.rates import rate

bp = Blueprint("sources", __name__)
UNCHECKED = {"status": "unknown", "listed_on": [], "checked_at": None}


def figures(messages, compliant, spf_fail, dkim_fail) -> dict:
    return {"total_messages": messages, "pass": compliant, "fail": messages - compliant,
            "spf_fail": spf_fail, "dkim_fail": dkim_fail,
            "compliance_rate": rate(compliant, messages)}


def source_row(row) -> dict:
    """A page row (ROW_FIELDS, then messages, compliant, spf_fail, dkim_fail, first, last,
    domains)."""
    (_, ip, ptr, name, slug, icon, abuse_status, authorized, country, messages, compliant,
     spf_fail, dkim_fail, first_seen, last_seen, domains) = row
    return {"source_ip": ip, **figures(messages, compliant, spf_fail, dkim_fail),
            "domains": domains, "first_seen": first_seen, "last_seen": last_seen, "ptr": ptr,
            "service_name": name, "service_slug": slug, "service_icon": icon,
            "abuse_status": abuse_status, "authorized": bool(authorized), "country": country}


def source_filter(args) -> queries.SourceFilter:
    return queries.SourceFilter(
        domain=params.optional_domain(args),
        search=params.search(args),
        reputation=params.choice(args, "reputation", queries.REPUTATIONS, None),
        has_failures=params.boolean(args, "has_failures"),
        sort_by=params.choice(args, "sort_by", queries.SORTS, "total_messages"),
        descending=params.descending(args))


@bp.get("/sources")
@requires("analytics:read")
def index():
    """The page's JSON, remembered until a report is stored or a source enriched (the report
    version and the latest enrichment, read in one statement)."""
    org_id, args = g.principal.org_id, request.args
    version, enriched = queries.count_stamp(org_id)
    key = ("sources page", source_filter(args), params.page(args), enriched)
    body = remember(key, org_id, lambda: dumps(answer(version, enriched)), version,
                    kept="pages")
    return Response(body, mimetype="application/json")


def answer(version: int | None = None, enriched=None) -> dict:
    """The request's GET /sources body (the sources page's too); the total is remembered
    apart from the page (a search counts by scanning every source's search text), under the
    version and enrichment the caller read, if it did."""
    org_id, args = g.principal.org_id, request.args
    wanted, page = source_filter(args), params.page(args)
    if version is None:
        version, enriched = queries.count_stamp(org_id)

    def rows(page):
        return [source_row(row) for row in queries.source_rows(org_id, wanted, page.limit,
                                                                 page.offset)]

    def total():
        return remember(("sources", wanted, enriched), org_id,
                        lambda: queries.source_count(org_id, wanted), version)
    body = envelope("sources", None, page, rows=rows, count=total)
    body["has_any"] = body["total"] > 0 or queries.any_source(org_id)
    return body


@bp.get("/sources/<ip>")
@requires("analytics:read")
def detail(ip: str, timeline: bool = True):
    """The source's body; the page, which shows no timeline, asks without it (a day per row
    of every day the IP sent on: most of the answer's time on a store of years)."""
    org_id = g.principal.org_id
    found = queries.source(org_id, canonical_ip(params.ip(ip)))
    if found is None:
        raise ApiError(404, "source_not_found")
    domains = queries.source_domains(org_id, found.ip)
    row = (found.id, found.ip, found.ptr, found.service_name, found.service_slug,
           found.service_icon, found.abuse_status, found.authorized, found.country,
           found.messages, found.compliant, found.spf_fail, found.dkim_fail, found.first_seen,
           found.last_seen, [d.domain for d in domains])
    body = source_row(row)
    body.update(
        fcrdns=found.fcrdns, service_kind=found.service_kind,
        geo={"country": found.country, "country_name": found.country_name, "asn": found.asn,
             "as_org": found.as_org},
        blocklist=found.blocklist or UNCHECKED,
        classification=found.classification,
        classification_reason=(found.verdict or {}).get("sentence", ""),
        enriched_at=found.enriched_at,
        domains=[domain_row(d) for d in domains])
    if timeline:
        body["timeline"] = [{"date": day, **_day(messages, compliant)}
                            for day, messages, compliant in queries.timeline(org_id, found.ip)]
    return body


def domain_row(d) -> dict:
    return {"domain": d.domain, **figures(d.messages, d.compliant, d.spf_fail, d.dkim_fail),
            "dispositions": {"none": d.messages - d.quarantined - d.rejected,
                             "quarantine": d.quarantined, "reject": d.rejected},
            "first_seen": d.first_seen, "last_seen": d.last_seen}


def _day(messages, compliant) -> dict:
    return {"total_messages": int(messages), "pass": int(compliant),
            "fail": int(messages) - int(compliant)}
