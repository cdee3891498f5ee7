# Needs only python3 on a fresh machine: `make venv` builds .venv, the other targets use it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PREFIXLINT := $(BIN)/prefixlint
STAMP := $(VENV)/.installed

# The audit of the logged requests shown by `make demo` (runs once the audit command exists).
DEMO_AUDIT := $(PREFIXLINT) audit fixtures/logs

.PHONY: venv demo test lint

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

# Findings (exit code 1) are the point of the demo; only errors (exit code 2) fail it.
demo: venv
	$(PREFIXLINT) check fixtures/templates fixtures/python || test $$? -eq 1
	if [ -d fixtures/logs ] && $(PREFIXLINT) audit --help >/dev/null 2>&1; then \
		$(DEMO_AUDIT) || test $$? -eq 1; \
	fi

test: venv
	$(BIN)/pytest

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
