# Two entry points, both self-contained on a fresh machine (python3 with venv is all they assume):
#   make demo   set up .venv and run the seed demo on generated baskets
#   make test   set up .venv and run the linters and the tests
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench-smoke clean

$(BIN)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/likewise demo -o demo_out

lint: $(BIN)/.installed
	$(BIN)/ruff check likewise tests bench
	$(BIN)/ruff format --check likewise tests bench

test: lint
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) demo_out .pytest_cache
