"""Gunicorn settings for rua's web API: `gunicorn -c deploy/gunicorn.conf.py`.

Every knob comes from rua's own Config (RUA_BIND, RUA_WORKERS, RUA_LOG_LEVEL), so a typo
in a RUA_* name (or a database URL rua cannot use) stops the server at start-up in one line
instead of silently using a default. Names starting with an underscore are ours; gunicorn only
reads the names of its own settings.
"""
import os

from config import Config as _Config, ConfigError as _ConfigError
from store import check_url as _check_url

# A bad setting stops the master in one line, before any worker meets it in a traceback.
try:
    _settings = _Config.from_env(os.environ)
    _check_url(_settings.database_url)    # the URL read; nothing is connected or made
except _ConfigError as _exc:
    raise SystemExit(f"rua-web: {_exc}") from None

# The Flask app built by wsgi.create_app() from the same RUA_* environment.
wsgi_app = "wsgi:app"

# Loopback by default: a reverse proxy (deploy/nginx.conf.example) terminates TLS in front.
bind = _settings.bind


def _cpus() -> int:
    # The CPUs this process may run on (a container or a taskset may allow fewer than exist).
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Sync workers: each request is short and waits on the database, so the classic 2 x CPUs + 1
# keeps every core busy while some workers wait. RUA_WORKERS > 0 pins the number.
workers = _settings.workers if _settings.workers > 0 else 2 * _cpus() + 1

# rua logs one line per request itself (webapp/request_log.py: method, path, status, time
# and the request id it returns as X-Request-Id, JSON with RUA_LOG_FORMAT=json), so gunicorn's
# access log stays off; its error log (start, stop, workers) goes to stderr.
accesslog = None
errorlog = "-"
loglevel = _settings.log_level
# gunicorn's own lines (start, workers, stop) in rua's format too, so RUA_LOG_FORMAT=json makes
# every line of the service JSON. The root logger gets no handler here: each worker gives it
# rua's (wsgi.py), and a second one would print every line twice.
logconfig_dict = {
    "root": {"handlers": []},
    "loggers": {"gunicorn.error": {"level": _settings.log_level.upper(),
                                   "handlers": ["error_console"], "propagate": False}},
    "handlers": {"error_console": {"class": "logging.StreamHandler", "formatter": "rua",
                                   "stream": "ext://sys.stderr"}},
    "formatters": {"rua": {"()": "logs.formatter", "log_format": _settings.log_format}},
}

# A worker silent this long is stuck (a lost lock, a hung DNS look-up): kill and replace it.
# The slowest legitimate request (health of a big domain computed without a snapshot) takes
# a few seconds, far below this.
timeout = 30

# On stop or reload, in-flight requests get this long to finish before workers are killed;
# systemd's TimeoutStopSec (deploy/rua-web.service) is set just above it.
graceful_timeout = 20

# Trust X-Forwarded-Proto/-For only from the local reverse proxy; a client elsewhere cannot
# claim https or another address. RUA_PROXIES sets how many proxy hops the app believes.
forwarded_allow_ips = "127.0.0.1,::1"

# The longest request line gunicorn takes: a long search term reaches the app, which cuts it to
# 100 characters, instead of meeting gunicorn's own HTML 414 page.
limit_request_line = 8190

# Recycle each worker after this many requests, so slow growth (fragmentation, a leak we have
# not found) never accumulates; the jitter keeps workers from all restarting at the same
# moment. Not much sooner: a new worker costs a fraction of a second of CPU (imports, the
# public suffix list, the app), a few microseconds a request when spread over 100,000.
max_requests = 100_000
max_requests_jitter = 10_000

# No preloading: each worker builds its own app, so no database connection crosses a fork.
preload_app = False

proc_name = "rua-web"

# No runtime control socket (gunicorn 27+): its default path is shared by every gunicorn of
# the user, so tests, benchmarks and `make run` would take it from one another; systemd's
# signals (HUP reload, TERM stop) are the control interface. Older gunicorns ignore the name.
control_socket_disable = True

# RUA_METRICS: each worker keeps its request counters in a file of its own under RUA_LOCK_DIR
# (prometheus_client's multiprocess mode), and GET /metrics adds them up, so a scrape counts
# every worker's requests whichever worker answers it. Set here, in the master, before any
# worker imports prometheus_client; emptied at each start, as the counters begin again then.
_metrics_dir = os.path.abspath(os.path.join(_settings.lock_dir, "prometheus"))
if _settings.metrics:
    os.makedirs(_metrics_dir, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir


def on_starting(server):
    if _settings.metrics:
        for name in os.listdir(_metrics_dir):
            if name.endswith(".db"):
                os.remove(os.path.join(_metrics_dir, name))


def child_exit(server, worker):
    # A worker's counters stay counted after it exits (recycled by max_requests, killed by
    # the timeout); its live gauges are dropped.
    if _settings.metrics:
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(worker.pid)
