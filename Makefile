# SimLab. `make run` opens the app on the bundled demo (headless demo without a display); `make test` runs the suite.
# Every target bootstraps .venv when it is missing and is safe to run again.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Parallel test workers: two cores here; override with `make test WORKERS=1`.
WORKERS ?= 2

.PHONY: run test bench lint venv test-deps clean

venv: $(STAMP)

# The example world family is installed as the outside package it is (its own pyproject, an entry point):
# the tests run the conformance suite and the app on every installed family.
EXAMPLE := examples/hidden_tictactoe

$(STAMP): pyproject.toml $(EXAMPLE)/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[gui,cluster,test,dev]"
	$(PY) -m pip install --quiet -e $(EXAMPLE)
	@touch $(STAMP)

run: $(STAMP)
	$(PY) main.py

test: $(STAMP) test-deps
	$(PY) -m pytest -n $(WORKERS) tests

# What the tests need beyond pip: today nothing outside Python; the GUI tests will need Xvfb and Mesa.
test-deps:
	@sh tools/ensure_test_deps.sh

# The desktop app's benchmarks need a display: use Xvfb when there is none.
XVFB := $(if $(DISPLAY),,$(shell command -v xvfb-run >/dev/null 2>&1 && echo 'xvfb-run -a -s "-screen 0 1600x1000x24 -noreset"'))

bench: $(STAMP)
	$(XVFB) $(PY) -m benchmarks

lint: $(STAMP)
	$(PY) -m ruff check simlab tests benchmarks tools main.py examples
	$(PY) -m ruff format --check simlab tests benchmarks tools main.py examples
	$(PY) -m mypy  # simlab/core, simlab/runner, simlab/analysis (see [tool.mypy] in pyproject.toml)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
