"""The WSGI entry point: `gunicorn wsgi:app` (settings from RUA_* variables)."""
import os
import sys

import logs
from config import Config, ConfigError
from webapp import StoreNotReady, create_app

try:
    config = Config.from_env(os.environ)
    logs.configure(config)
    app = create_app(config)
except (ConfigError, StoreNotReady) as exc:
    # One line, not gunicorn's traceback of the worker; status 3 is gunicorn's "worker failed to
    # boot", which stops the server instead of starting the worker again and again.
    print(f"rua-web: {exc}", file=sys.stderr)
    sys.exit(3)
