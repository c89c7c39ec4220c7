# Two commands for a newcomer: `make run` and `make test`. Everything lands in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install init run test clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

init: install
	$(BIN)/rua init

run: init

test: install
	$(BIN)/pytest

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache
