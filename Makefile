# Needs only python3 on a fresh machine: `make venv` builds .venv, the other targets use it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PREFIXLINT := $(BIN)/prefixlint
STAMP := $(VENV)/.installed

# The torch replay and its tests need torch: `make torch` adds it (CI does); without it those
# tests skip with their reason.
TORCH_SPEC ?= torch==2.13.0

.PHONY: venv torch ray demo test test-slow lint typecheck

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[dev,hf]'
	touch $(STAMP)

torch: venv
	$(BIN)/python -m pip install -q '$(TORCH_SPEC)'

# audit --executor ray and its tests need the ray extra: `make ray` adds it (CI does); without
# it those tests skip with their reason.
ray: venv
	$(BIN)/python -m pip install -q -e '.[ray]'

# Findings (exit code 1) are the point of the demo; only errors (exit code 2) fail it.
demo: venv
	$(PREFIXLINT) check fixtures/templates fixtures/python || test $$? -eq 1
	$(PREFIXLINT) audit fixtures/logs/tau_openai_breakers.jsonl --cache vllm --cache openai

test: venv
	$(BIN)/pytest

# Fuzz corpora, memory bounds, pre-commit and wheel builds: minutes, so apart (CI runs both).
test-slow: venv
	$(BIN)/pytest -m slow

lint: venv
	$(BIN)/pre-commit run --all-files --show-diff-on-failure

# mypy --strict on the whole package, as configured in pyproject.toml (pre-commit runs it too).
typecheck: venv
	$(BIN)/mypy
