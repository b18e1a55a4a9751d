# ccbench: two commands on a fresh machine.
#   make demo   set everything up and run the headline example (VoIP beside a download)
#   make test   run every test (Rust and Python)
# Everything is installed by these targets: a virtual environment in .venv with the
# Python dependencies, and a release build of the Rust extension.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ccbench-installed

.PHONY: setup build demo test test-rust test-python system-deps bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml Cargo.toml Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip maturin
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		$(VENV)/bin/maturin develop --release --extras test -q
	cargo build --release -p ccemu -p ccprobe
	@touch $(STAMP)

build: setup

# VoIP beside a CUBIC download on an ADSL line: the VoIP delay alone and with the
# download, the run in runs/demo and its HTML report (runs/demo/report.html).
demo: setup
	$(PY) -m ccbench.demo --scenario examples/adsl1_voip_download.toml --out runs/demo

test: setup system-deps test-rust test-python

system-deps:
	./scripts/system-deps.sh

test-rust:
	cargo test -p ccsim -p ccemu -p ccprobe

test-python: setup
	$(PY) -m pytest -q

bench: setup
	$(VENV)/bin/ccbench bench

clean:
	rm -rf $(VENV) target runs
