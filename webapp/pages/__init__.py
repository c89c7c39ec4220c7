"""The dashboard for people: HTML pages at the site root, signed in with an API key. Each page
is rendered from the functions the API answers from, for the same key, so its numbers are the
API's (docs/dashboard.md)."""
from webapp.pages import assets, errors, lists, overview, signin  # noqa: F401 - routes join bp
from webapp.pages.site import api_path, bp, refuse_a_shared_path

__all__ = ["api_path", "bp", "refuse_a_shared_path"]
