"""The WSGI entry point: `gunicorn wsgi:app` (settings from RUA_* variables)."""
import os

import logs
from config import Config
from webapp import create_app

config = Config.from_env(os.environ)
logs.configure(config)
app = create_app(config)
