# `make run` sets up a fresh machine and starts graphwright; `make test` sets up and runs the checks.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per install, named by pyproject.toml's checksum: a changed file installs again.
RUN_STAMP := $(VENV)/.installed-run-$(shell cksum pyproject.toml | cut -d' ' -f1)
TEST_STAMP := $(VENV)/.installed-test-$(shell cksum pyproject.toml | cut -d' ' -f1)
PG_URL := postgresql+psycopg://postgres@127.0.0.1:5432/test
# Two workers: much of the suite waits on servers, browsers and subprocesses, so two cores keep
# busy; each test module stays on one worker (its module-scoped servers start once).
PYTEST := $(BIN)/pytest -q -n 2 --dist loadscope
# MCP Inspector for tests/mcp/test_inspector_cli.py, installed once into a git-ignored node_modules.
INSPECTOR_VERSION := 2.12.0
INSPECTOR := .mcp-inspector/node_modules/.bin/mcp-inspector
# The official MCP conformance suite and the Node 22 it needs (npm's node@22), for
# tests/mcp/test_conformance.py, installed once into a git-ignored node_modules.
CONFORMANCE_VERSION := 0.1.16
CONFORMANCE := .mcp-conformance/node_modules/.bin/conformance
# axe-core, injected into pages by the browser tests (tests/web/test_browser_a11y.py), installed
# once into a git-ignored node_modules.
AXE_VERSION := 4.11.0
AXE := .axe-core/node_modules/axe-core/axe.min.js

.PHONY: run test lint format install install-test bench clean inspector conformance browser axe

# `make run` installs what running needs; `make test` adds the test extras (pytest, selenium,
# schemathesis, ruff, ...), which running never loads.
$(RUN_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("graphwright needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	rm -f $(VENV)/.installed-run-*
	touch $@

$(TEST_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-test-*
	touch $@

install: $(RUN_STAMP)

install-test: $(TEST_STAMP)

run: install
	$(BIN)/graphwright serve

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

inspector:
	@if test -x $(INSPECTOR); then :; \
	elif command -v npm >/dev/null; then \
		npm install --no-save --no-audit --no-fund --prefix .mcp-inspector \
			@modelcontextprotocol/inspector@$(INSPECTOR_VERSION); \
	else echo "npm is missing: the MCP Inspector test will be skipped"; fi

conformance:
	@if test -x $(CONFORMANCE); then :; \
	elif command -v npm >/dev/null; then \
		npm install --no-save --no-audit --no-fund --prefix .mcp-conformance \
			@modelcontextprotocol/conformance@$(CONFORMANCE_VERSION) node@22; \
	else echo "npm is missing: the MCP conformance test will be skipped"; fi

axe:
	@if test -f $(AXE); then :; \
	elif command -v npm >/dev/null; then \
		npm install --no-save --no-audit --no-fund --prefix .axe-core axe-core@$(AXE_VERSION); \
	else echo "npm is missing: the accessibility tests will be skipped"; fi

# Debian's Chromium and ChromeDriver for tests/web (CI runs as root); never a downloaded browser.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium chromium-driver >/dev/null \
		|| echo "chromium could not be installed: the browser tests will be skipped"; \
	else echo "chromium/chromium-driver missing and not installable: browser tests will be skipped"; fi

# The Python install and the three downloads run side by side: most of their time is waiting
# on the network, and `make test` must stay well inside CI's 20 minutes.
test:
	$(MAKE) --jobs=5 --output-sync=target lint inspector conformance browser axe
	@if $(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 5432), 1)" 2>/dev/null; then \
		echo "PostgreSQL answers: testing on SQLite and PostgreSQL"; \
		export GRAPHWRIGHT_TEST_DATABASE_URL=$(PG_URL); \
	else \
		echo "PostgreSQL is not running: testing on SQLite only"; \
	fi; \
	$(PYTEST)

bench: install-test
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
