# The two commands the README opens with. Everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## make run: the gateway on embedded defaults (text chat until the voice gateway lands)
run: $(STAMP)
	$(BIN)/callswarm chat

## make test: set everything up and run the whole suite
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
