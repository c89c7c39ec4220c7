# Two commands for a newcomer: `make run` and `make test`. Everything lands in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Extra pytest arguments, e.g. `make test PYTEST_ARGS="tests/cli -x"`.
PYTEST_ARGS ?=

.PHONY: install init run test clean python-ok

# Fail early, with the fix, on a machine whose Python is too old or lacks venv/ensurepip.
python-ok:
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "make: $(PYTHON) not found: install Python 3.10 or newer (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { \
	  echo "make: rua needs Python 3.10 or newer; $(PYTHON) is $$($(PYTHON) -V 2>&1). Use make PYTHON=python3.12 (or similar)." >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "make: $(PYTHON) cannot create virtual environments (no venv/ensurepip module)." >&2; \
	  echo "      Debian/Ubuntu: apt-get install python3-venv   Fedora: dnf install python3   then run make again." >&2; exit 1; }

$(STAMP): setup.cfg pyproject.toml
	@$(MAKE) --no-print-directory python-ok
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

init: install
	$(BIN)/rua init

# The demo organization (created once, with its reports) and a fresh read key, snapshots of
# every organization, then the API in the foreground on 127.0.0.1:8000 (Ctrl-C stops it).
# The key is printed, never written to a file: only its hash is stored.
run: init
	@echo "Loading the demo organization (first run: a few seconds) ..."
	@set -e; \
	out=$$($(BIN)/rua demo); \
	echo "$$out" | sed '$$d'; \
	key=$$(echo "$$out" | tail -n 1); \
	$(BIN)/rua snapshot --all | tail -n 1; \
	echo; \
	echo "Demo API key (read scope): $$key"; \
	echo "Try it:"; \
	echo "  curl -H \"Authorization: Bearer $$key\" http://127.0.0.1:8000/api/v1/reports"; \
	echo; \
	exec $(BIN)/gunicorn -c deploy/gunicorn.conf.py --bind 127.0.0.1:8000

# The import contracts first (.importlinter, docs/architecture.md): a broken one fails the target.
test: install
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache
