# Two commands for a newcomer: `make run` and `make test` (`make serve` serves your own store).
# Everything lands in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
INSTALLED      := $(VENV)/.installed
TEST_INSTALLED := $(VENV)/.installed-test
DEMO_DATABASE_URL ?= sqlite:///var/demo.db
# Extra `rua demo` arguments for `make run`, e.g. DEMO_ARGS="--days 30".
DEMO_ARGS ?=
# Extra pytest arguments, e.g. `make test PYTEST_ARGS="tests/cli -x"`.
PYTEST_ARGS ?=
# The suite runs in one process per CPU (pytest-xdist, a test file to a process): most of its
# time is spent waiting on servers it starts. TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= auto

.PHONY: install init run serve test clean python-ok

# Fail early, with the fix, on a machine whose Python is too old or lacks venv/ensurepip.
python-ok:
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "make: $(PYTHON) not found: install Python 3.10 or newer (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { \
	  echo "make: rua needs Python 3.10 or newer; $(PYTHON) is $$($(PYTHON) -V 2>&1). Use make PYTHON=python3.12 (or similar)." >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "make: $(PYTHON) cannot create virtual environments (no venv/ensurepip module)." >&2; \
	  echo "      Debian/Ubuntu: apt-get install python3-venv   Fedora: dnf install python3   then run make again." >&2; exit 1; }

$(INSTALLED): setup.cfg pyproject.toml
	@$(MAKE) --no-print-directory python-ok
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(INSTALLED)

# The test tools on top, for `make test` only: `make run` and a server need none of them.
# axe-core (npm) checks the dashboard's pages in the browser test; without npm that test skips.
$(TEST_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	if command -v npm >/dev/null 2>&1; then npm install --silent --no-save --prefix $(VENV)/node axe-core@4; fi
	touch $(TEST_INSTALLED)

install: $(INSTALLED)

init: install
	$(BIN)/rua init

# The demo, in a store of its own (var/demo.db; DEMO_DATABASE_URL names another): the demo
# organization (created once, with its reports), a read key valid 7 days (the one printed by
# the previous run is revoked), snapshots, then the API in the foreground on RUA_BIND (default
# 127.0.0.1:8000; Ctrl-C stops it). The key is printed, never written to a file.
run: install
	@set -e; \
	export RUA_DATABASE_URL='$(DEMO_DATABASE_URL)'; \
	base=$$($(BIN)/python deploy/bind_free.py); \
	echo "Loading the demo organization into $(DEMO_DATABASE_URL) (first run: a few seconds) ..."; \
	out=$$($(BIN)/rua demo $(DEMO_ARGS)); \
	echo "$$out" | sed '$$d'; \
	key=$$(echo "$$out" | tail -n 1); \
	$(BIN)/rua snapshot --all | tail -n 1; \
	echo; \
	echo "Demo API key (read scope): $$key"; \
	echo "Dashboard: $${base%/api/v1}/ (sign in with the key)"; \
	echo "Try it:"; \
	echo "  curl -H \"Authorization: Bearer $$key\" $$base/reports"; \
	echo; \
	exec $(BIN)/gunicorn -c deploy/gunicorn.conf.py

# The API over your own store (RUA_DATABASE_URL, default var/rua.db, schema created or
# upgraded first) on RUA_BIND, in the foreground: what deploy/rua-web.service runs. The port
# is checked first, so a busy one leaves no store behind.
serve: install
	@$(BIN)/python deploy/bind_free.py >/dev/null
	$(BIN)/rua init
	exec $(BIN)/gunicorn -c deploy/gunicorn.conf.py

# The import contracts first (.importlinter, docs/architecture.md): a broken one fails the target.
test: $(TEST_INSTALLED)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache
