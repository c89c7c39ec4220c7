"""The pages' blueprint and request steps: the session (or a redirect to sign in), metering
as the API route a page mirrors, then a strict Content-Security-Policy on every answer."""
from __future__ import annotations

from urllib.parse import urlparse

from flask import Blueprint, current_app, g, redirect, render_template, request, url_for
from markupsafe import Markup, escape

from config import ConfigError
from store.clock import from_epoch
from webapp import connections, quota
from webapp.request_checks import public
from webapp.pages import sessions

bp = Blueprint("pages", __name__, template_folder="templates")   # at the site root

# Only this origin, no script at all, forms posted here only, never framed.
POLICY = ("default-src 'self'; script-src 'none'; object-src 'none'; style-src 'self'; "
          "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
# The links of the page header: (endpoint, label, permission the page needs).
NAVIGATION = (("pages.overview", "Overview", "analytics:read"),
              ("pages.reports", "Reports", "report:read"),
              ("pages.sources", "Sources", "analytics:read"),
              ("pages.tls_reports", "TLS reports", "report:read"),
              ("pages.events", "Events", "alert:read"),
              ("pages.usage", "Usage", "integration:read"))


def api_path(config=None) -> str:
    """The path the API is mounted at (RUA_BASE_URL's, without its last slash: /api/v1)."""
    config = config or current_app.config["RUA"]
    return urlparse(config.base_url).path.rstrip("/")


def refuse_a_shared_path(url_map, config) -> None:
    """Refuse an API mounted where the pages are (the site root, or a page's first segment such
    as /reports): one of the two would answer in the other's place. Raised at start-up."""
    base = api_path(config)
    first_segment = base.split("/")[1] if base else ""      # "" is the site root
    taken = {rule.rule.split("/")[1] for rule in url_map.iter_rules()
             if rule.endpoint.startswith("pages.")}
    if first_segment in taken:
        raise ConfigError(f"RUA_BASE_URL={config.base_url!r}: the API cannot be mounted at "
                          f"{base or '/'}, where the dashboard's pages are; give it a path of "
                          "its own, such as /api/v1")


def page(mirrors: str):
    """A page for a signed-in person, metered as the API route `mirrors` (a URL rule) is."""
    def decorate(view):
        view.mirrors = mirrors
        return public(view)       # no bearer key: the session stands for it (signed_in below)
    return decorate


def form(view):
    """A view of the sign-in forms: the store without a session."""
    view.mirrors = None
    return public(view)


@bp.before_request
def signed_in():
    view = current_app.view_functions[request.endpoint]
    if not hasattr(view, "mirrors"):
        return None                  # a static file: no store, no session, not metered
    app = current_app._get_current_object()
    connections.open_for_request(app, g._get_current_object())
    g.now = app.config["RUA_CLOCK"]()
    if view.mirrors is None:
        return None
    principal = sessions.resume(g.now, app.config["RUA"])
    if principal is None:
        return redirect(url_for("pages.sign_in", next=request.full_path.rstrip("?"),
                                ended=g.get("ended")))
    g.principal = principal
    heavy, counted = quota.route_kind(view.mirrors)
    quota.gate(g, principal, g.now, heavy=heavy, counted=counted)
    return None


@bp.after_request
def secured(response):
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["Referrer-Policy"] = "same-origin"
    sessions.keep_form_token(response)
    return response


@bp.app_template_filter("number")
def number(value) -> str:
    """12345 as 12,345; 97.25 as 97.3 (the API's own value stays in the element's value)."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


@bp.app_template_filter("utc")
def utc(epoch: int) -> str:
    """An epoch second (a report's DateRange) as a UTC day and time."""
    return from_epoch(epoch).strftime("%Y-%m-%d %H:%M UTC")


def render(template: str, status: int = 200, **context):
    """A page: the template inside the layout, with the header's links the key may follow."""
    principal = g.get("principal")
    links = [(endpoint, label) for endpoint, label, permission in NAVIGATION
             if principal is not None and principal.allows(permission)]
    html = render_template(template, navigation=links, principal=principal,
                           form_token=sessions.form_token(), **context)
    return html, status, {"Content-Type": "text/html; charset=utf-8"}


@bp.app_template_global("api_number")
def api_number(number_value, path: str, answer: str = "") -> Markup:
    """A number as <data>: shown formatted, with the API's value and where it stands in the
    API's answer (its JSON path, and the API path of the answer when it is not the page's
    own): the tests compare each with the API's answer."""
    # One f-string with its parts escaped: a long list page calls this for every number, and
    # Markup.format costs far more (docs/performance.md, The dashboard's pages).
    raw = "" if number_value is None else escape(number_value)
    source = f' data-from="{escape(answer)}"' if answer else ""
    return Markup(f'<data value="{raw}" data-api="{escape(path)}"{source}>'
                  f'{number(number_value)}</data>')
