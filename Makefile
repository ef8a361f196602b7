# Two entry points, both self-contained on a fresh machine (python3 with venv is all they assume):
#   make demo   set up .venv with what the demo needs (core + plot + progress) and run the seed demo
#   make test   set up .venv with the dev extra and run the linters and the tests
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint dist bench-smoke clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The demo's install: the core and the plot / progress extras only (no torch, gensim or Playwright).
$(BIN)/.installed-demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[plot,progress]'
	touch $@

# torch from the CPU index first (the dev extra pins the version): PyPI's Linux wheel pulls the CUDA
# stack, several GB no test needs. A CUDA machine sets TORCH_INDEX= (empty) to take PyPI's wheel. Where
# that index cannot be reached (a mirror of PyPI only, a wheelhouse), the pinned torch comes from pip's
# configured indexes instead: no retries, so an unreachable host costs seconds, not minutes.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_PIN = torch==$$(sed -n 's/.*"torch==\([0-9.]*\)".*/\1/p' pyproject.toml)

$(BIN)/.installed: pyproject.toml | $(BIN)/python
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install -q --retries 0 --timeout 15 "$(TORCH_PIN)" --index-url $(TORCH_INDEX) \
	  || $(BIN)/python -m pip install -q "$(TORCH_PIN)")
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(BIN)/.installed-demo

demo: $(BIN)/.installed-demo
	$(BIN)/likewise demo -o demo_out

lint: $(BIN)/.installed
	$(BIN)/ruff check likewise tests bench
	$(BIN)/ruff format --check likewise tests bench

test: lint
	$(BIN)/python -m pytest -q

# What a user installs: build the sdist and the wheel, install the wheel into a fresh venv, run the demo.
dist: $(BIN)/.installed
	rm -rf dist build/dist-venv
	$(BIN)/python -m build --sdist --wheel --outdir dist . >/dev/null
	$(PY) -m venv build/dist-venv
	build/dist-venv/bin/python -m pip install -q "$$(ls dist/likewise-*.whl)[plot]"
	cd build && dist-venv/bin/likewise demo -o dist-demo --quiet && test -s dist-demo/map.png
	@echo "dist: $$(ls dist) install and run the demo"

clean:
	rm -rf $(VENV) demo_out .pytest_cache dist build
