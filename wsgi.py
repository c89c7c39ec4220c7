"""The WSGI entry point: `gunicorn wsgi:app` (settings from RUA_* variables)."""
from webapp import create_app

app = create_app()
