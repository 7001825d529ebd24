# gpu-platform: `make synth` renders the dev stack offline; `make test` runs every test tier.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STACK   ?= dev
OUT     ?= build/$(STACK)

.PHONY: setup synth test lint validate bench clean golden docs policy-pack schema

# Three install levels in one .venv: runtime (render, validate, cost: what `make synth` needs), dev (cloud SDKs and
# the test toolchain, for `make test`), docs (MkDocs, for `make docs`). Each stamp is redone when pyproject changes.
$(VENV)/.runtime: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

$(VENV)/.docs: $(VENV)/.runtime
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@

setup: $(VENV)/.dev

synth: $(VENV)/.runtime
	$(BIN)/gpu-platform synth Pulumi.$(STACK).yaml --out $(OUT)

validate: $(VENV)/.runtime
	$(BIN)/gpu-platform validate Pulumi.$(STACK).yaml

lint: $(VENV)/.dev  ## ruff lint and format check on everything, mypy --strict on components/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(VENV)/.dev lint  ## lint first (so CI, which runs `make test`, lints too), then every test tier
	$(BIN)/python -m pytest

golden: $(VENV)/.dev
	GPU_PLATFORM_UPDATE_GOLDEN=1 $(BIN)/python -m pytest tests -k golden

docs: $(VENV)/.docs  ## regenerate the spec and CLI references from the code, then build the site strictly
	$(BIN)/python -m gpu_platform.spec_reference docs/reference/spec.md
	$(BIN)/python -m gpu_platform.cli_reference docs/reference/cli.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

schema: setup  ## regenerate the provider's mirror types from spec.py, then the committed schema.json
	$(BIN)/python -m gpu_platform.provider.codegen
	$(BIN)/python -m gpu_platform.provider.schema > schema.json

policy-pack: $(VENV)/.runtime  ## the library's wheel inside policies/, so the pack installs from that folder alone
	rm -rf policies/wheels && $(BIN)/pip wheel --quiet --no-deps -w policies/wheels .

bench: $(VENV)/.dev
	$(BIN)/python benchmarks/bench_spec.py

clean:
	rm -rf build $(VENV) .pytest_cache
