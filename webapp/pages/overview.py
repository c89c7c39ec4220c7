"""The organization's overview (/) and a domain's pages (/domains/{d}, its /health alias and
/dns?record=…), read from the snapshots the API serves for the same key."""
from __future__ import annotations

from flask import g, redirect, request, url_for

from snapshotter import series
from store import event_queries, queries, tls_queries
from store.encoding import loads
from webapp import params
from webapp.auth import requires
from webapp.errors import ApiError
from webapp.request_checks import public
from webapp.health import monitored
from webapp.answer_cache import remember
from webapp.pages import charts
from webapp.pages.params import DNS_KINDS, chart_days, record_kind
from webapp.pages.site import bp, page, render
from webapp.snapshot_answers import fetch, org_has_domain
from webapp.top_sources import source_shape

OPEN_EVENTS = 10          # the newest open events the overview lists
TOP_SOURCES = 10
TLS_REPORTS = 5


def _trend(domain: str, days: int) -> list[dict]:
    """The last `days` points of /trends (organization, or one domain), as the API cuts them."""
    org_id = g.principal.org_id
    known = None if not domain else (lambda: org_has_domain(org_id, domain))
    snapshot = fetch("trends", domain, exists=known)
    return [] if snapshot is None else loads(series.last(snapshot.body, days))


def _charts(domain: str, days: int) -> list[charts.Chart]:
    points = _trend(domain, days)
    if not points:
        return []
    return [charts.rate_line(f"DMARC compliance, last {days} days", points),
            charts.volume_bars(f"Messages per day, last {days} days", points)]


@bp.get("/")
@page("/dashboard/overview")
@requires("analytics:read")
def overview():
    days = chart_days(request.args)
    body = loads(fetch("overview").body)
    events = None
    if g.principal.allows("alert:read"):
        wanted = event_queries.EventFilter(handled=False)
        rows = event_queries.page(g.principal.org_id, wanted, OPEN_EVENTS, 0)
        events = {"events": [event_queries.shape(r) for r in rows],
                  "total": event_queries.count(g.principal.org_id, wanted)}
    return render("pages/overview.html", title="Overview", overview=body, events=events,
                  charts=_charts("", days), days=days)


def _health(domain: str) -> tuple[str, dict]:
    """The domain's normal name and its health answer (404 as the API when not monitored)."""
    name = params.domain(domain)
    if not monitored(g.principal.org_id, name, g.get("store_version")):
        raise ApiError(404, "domain_not_monitored")
    return name, loads(fetch("health", name).body)


@bp.get("/domains/<domain>")
@page("/domains/<path:domain>/health")
@requires("domain:read")
def domain(domain):
    name, health = _health(domain)
    org_id, days = g.principal.org_id, chart_days(request.args)
    every = remember(("top_sources", name), org_id, lambda: queries.top_sources(org_id, name))
    chosen = every[:TOP_SOURCES]
    services = queries.source_services(org_id, [row[0] for row in chosen])
    sources = [source_shape(row, services.get(row[0])) for row in chosen]
    tls = tls_queries.tls_page(org_id, tls_queries.TlsFilter(domain=name), TLS_REPORTS, 0)
    return render("pages/domain.html", title=name, name=name, health=health,
                  charts=_charts(name, days), days=days, sources=sources,
                  sources_total=len(every), tls_reports=tls)


@bp.get("/domains/<domain>/health")
@public
def domain_health(domain):
    """The in-app link events carry: the domain's page (which checks the session)."""
    return redirect(url_for("pages.domain", domain=domain))


@bp.get("/domains/<domain>/dns")
@page("/domains/<path:domain>/health")
@requires("domain:read")
def dns(domain):
    """One DNS record kind of the domain (the link action items and DNS events carry)."""
    name, health = _health(domain)
    kind = record_kind(request.args)
    kinds = [kind] if kind else [k for k in DNS_KINDS if k in health["dns"]]
    return render("pages/dns.html", title=f"DNS of {name}", name=name, health=health,
                  kind=kind, kinds=kinds, all_kinds=DNS_KINDS)
