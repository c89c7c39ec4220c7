"""The pages' Jinja templates: data read by the pages blueprint (webapp/pages/site.py)."""
