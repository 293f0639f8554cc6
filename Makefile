# labkit: two commands on a fresh machine: `make run` and `make test`. Each builds .venv first.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export LABKIT_BATCH ?= 1
# No MPLBACKEND here: notebook kernels inherit it, and Agg would keep every figure out of them.

# make bench's Sage2 mainloop: sm90 (sm_90a only) or seed
SCHEDULE ?= sm90

.PHONY: help run test test-scale test-browser bench lab nb lint clean

help:
	@echo "make run    run every notebook with its defaults (recorded mode without a GPU); prints where results are"
	@echo "make test   run the tests (GPU tests skip without a GPU)"
	@echo "make test-scale    the Dask sweep tests (installs dask and distributed first)"
	@echo "make test-browser  run notebook 02 in JupyterLab in headless chromium (installs chromium first)"
	@echo "make bench  print benchmark tables: Sage2 phases, then paged decode with its peers (needs a GPU);"
	@echo "            SCHEDULE=sm90 (default: the Hopper build, sm_90a) or seed picks the Sage2 mainloop"
	@echo "make lab    start JupyterLab on notebooks/"
	@echo "make nb     write notebooks/*.ipynb from the percent sources"
	@echo "make profile-NN  notebook NN as a plain script under ncu (NCU_ARGS: labkit ncu run options)"
	@echo "make lint   ruff over labkit, tests and the notebook sources"
	@echo "make clean  delete runs/ (local runs; data/runs stays), build/ and the generated .ipynb"

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

run: $(STAMP)
	$(BIN)/labkit nb run-all

test: $(STAMP)
	$(BIN)/python -m pytest -q tests --ignore=tests/browser --ignore=tests/scale

# The Dask path of labkit.sweep (labkit[scale]); `make test` stays lean without it.
test-scale: $(STAMP)
	$(BIN)/python -m pip install -q -r requirements-scale.txt
	$(BIN)/python -m pytest -q tests/scale

# Debian's chromium + chromedriver (apt, as root or through sudo) and selenium from PyPI.
test-browser: $(STAMP)
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -q && \
	    $$SUDO apt-get install -y -q chromium chromium-driver; }
	$(BIN)/python -m pip install -q -r requirements-browser.txt
	$(BIN)/python -m pytest -q -s tests/browser

bench: $(STAMP)
	$(BIN)/python -m labkit bench --schedule $(SCHEDULE)
	$(BIN)/python -m labkit decode bench --peers

nb: $(STAMP)
	for f in notebooks/[0-9][0-9]_*.py; do $(BIN)/jupytext --to ipynb --update "$$f" || exit 1; done

lab: nb
	$(BIN)/labkit lab

# a notebook under ncu as a plain script (`labkit nb script`), not a Jupyter kernel:
#   make profile-02 NCU_ARGS="--range sage2/fused_mainloop --preset source"   (report: build/02.ncu-rep)
NCU_ARGS ?=
profile-%: $(STAMP)
	$(BIN)/labkit nb script $* --out build/$*.py
	$(BIN)/labkit ncu run --out build/$* $(NCU_ARGS) -- $(BIN)/python build/$*.py

lint: $(STAMP)
	$(BIN)/ruff check labkit tests notebooks

clean:
	rm -rf runs build .pytest_cache notebooks/*.ipynb
