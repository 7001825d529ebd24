# gpu-platform: `make synth` renders the dev stack offline; `make test` runs every test tier.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STACK   ?= dev
OUT     ?= build/$(STACK)

.PHONY: setup synth test validate bench clean golden docs policy-pack schema

$(BIN)/gpu-platform: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/gpu-platform

synth: setup
	$(BIN)/gpu-platform synth Pulumi.$(STACK).yaml --out $(OUT)

validate: setup
	$(BIN)/gpu-platform validate Pulumi.$(STACK).yaml

test: setup
	$(BIN)/python -m pytest

golden: setup
	GPU_PLATFORM_UPDATE_GOLDEN=1 $(BIN)/python -m pytest tests -k golden

docs: setup
	$(BIN)/python -m gpu_platform.spec_reference README.md

schema: setup  ## regenerate the provider's mirror types from spec.py, then the committed schema.json
	$(BIN)/python -m gpu_platform.provider.codegen
	$(BIN)/python -m gpu_platform.provider.schema > schema.json

policy-pack: setup  ## the library's wheel inside policies/, so the pack installs from that folder alone
	rm -rf policies/wheels && $(BIN)/pip wheel --quiet --no-deps -w policies/wheels .

bench: setup
	$(BIN)/python benchmarks/bench_spec.py

clean:
	rm -rf build $(VENV) .pytest_cache
