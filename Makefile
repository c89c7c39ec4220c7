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

run: init

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache
