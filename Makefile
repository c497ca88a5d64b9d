# Everyday tasks. `make` lists them; every target bootstraps what it needs.

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# What serving needs alone: `make serve` on a fresh checkout installs only this.
SERVE_STAMP := $(VENV)/.installed-serve
PATHS  := $(wildcard src tests bench scripts clients/python/src)
# buf lints an image of the protos with their imports: google/api comes from the
# googleapis-common-protos package, as buf's registry is not reachable from CI.
BUF    := $(PY) scripts/generate_protos.py --image build/proto.binpb && \
          npx --no-install buf lint build/proto.binpb --path agentmemory
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.DEFAULT_GOAL := help
.PHONY: help venv serve test test-external generate check-generated node_modules \
        lint-proto lint typecheck fmt bench check clean

help: ## list targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(PY):
	python3 -m venv $(VENV)

# With the pip that python3 -m venv ships, as users install it. The service's
# distribution holds the client and the generated stubs (clients/python) too. The
# development tools (tests, linters, the browser driver) come with the dev extra,
# which holds everything serving needs as well.
$(SERVE_STAMP): pyproject.toml clients/python/pyproject.toml | $(PY)
	$(PY) -m pip install -e .
	@touch $@

$(STAMP): pyproject.toml clients/python/pyproject.toml | $(PY)
	$(PY) -m pip install -e ".[dev]"
	@touch $@ $(SERVE_STAMP)

venv: $(STAMP) ## create .venv and install the project (re-run when pyproject.toml changes)

HTTP_LISTEN ?= 127.0.0.1:8080

serve: $(SERVE_STAMP) ## start the service on the embedded database, HTTP and the panel on HTTP_LISTEN (extra flags: ARGS=...)
	$(VENV)/bin/agent-memory serve --http-listen $(HTTP_LISTEN) $(ARGS)

# One worker per core, each with a PostgreSQL database (and, embedded, a server) of its
# own; a module's tests stay on one worker, which starts its servers once.
PARALLEL := -n auto --dist loadscope

test: venv examples/node/node_modules/.package-lock.json ## run the test suite on the embedded PostgreSQL, in parallel (extra flags: PYTEST_ARGS=..., -n 0 for one process)
	$(PY) -m pytest $(PARALLEL) $(PYTEST_ARGS)

test-external: export MEMORY_TEST_DATABASE_URL ?= postgresql://postgres@127.0.0.1:5432/test
test-external: venv examples/node/node_modules/.package-lock.json ## run the test suite on MEMORY_TEST_DATABASE_URL (default: local server)
	$(PY) -m pytest $(PARALLEL) $(PYTEST_ARGS)

generate: venv ## regenerate clients/python/generated/ from proto/, README's settings table and the statements' snapshot
	$(PY) scripts/generate_protos.py
	$(PY) scripts/settings_table.py
	$(PY) scripts/snapshot_statements.py

check-generated: venv ## fail when clients/python/generated/, README's settings table or the statements' snapshot is stale
	$(PY) scripts/generate_protos.py --check
	$(PY) scripts/settings_table.py --check
	$(PY) scripts/snapshot_statements.py --check

node_modules/.package-lock.json: package-lock.json package.json
	npm ci
	@touch $@

node_modules: node_modules/.package-lock.json ## install the proto tooling (npm ci)

# The Node.js example client's dependencies; tests/e2e/test_node_client.py runs it.
examples/node/node_modules/.package-lock.json: examples/node/package-lock.json examples/node/package.json
	npm ci --prefix examples/node
	@touch $@

lint-proto: venv node_modules ## buf lint the protos
	$(BUF)

lint: venv node_modules ## ruff check + format check, then buf lint
	$(VENV)/bin/ruff check $(PATHS)
	$(VENV)/bin/ruff format --check $(PATHS)
	$(BUF)

typecheck: venv ## mypy (strict)
	$(VENV)/bin/mypy

fmt: venv ## format and auto-fix with ruff
	$(VENV)/bin/ruff format $(PATHS)
	$(VENV)/bin/ruff check --fix $(PATHS)

bench: venv ## run every bench/*.py in order
	@set -e; for f in bench/*.py; do \
		[ -e "$$f" ] || { echo "no benchmarks in bench/"; break; }; \
		echo "== $$f"; $(PY) "$$f"; \
	done

check: check-generated lint typecheck test ## everything CI checks

clean: ## remove caches and build output (keeps .venv, node_modules and the embedded database)
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info src/*.egg-info \
	       clients/python/build clients/python/dist clients/python/*.egg-info \
	       clients/python/src/*.egg-info clients/python/generated/*.egg-info
	find . -name __pycache__ -type d -not -path './.venv/*' -not -path './node_modules/*' -prune -exec rm -rf {} +
