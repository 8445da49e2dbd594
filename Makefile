# The two-command contract: `make run` and `make test` work on a fresh clone with only Python 3.11+.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench setup clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/skat run

# Two workers (SKAT_TEST_WORKERS): each bus test starts its own nats-servers and service
# processes and spends much of its time waiting on them, so two run well side by side.
SKAT_TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -n $(SKAT_TEST_WORKERS)

# The quality gates CI runs with the tests: ruff (lint and format) and mypy (strict for protocol/).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy protocol services skatbus bench

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
