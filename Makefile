# placement.upgrade: the two commands are `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip 2>&1 | grep -v 'is ignored' || true
	$(BIN)/pip install -q -r requirements-dev.txt 2>&1 | grep -v 'is ignored'; test $${PIPESTATUS[0]} -eq 0
	mkdir -p $(VENV)/collections/ansible_collections/placement
	ln -sfn $(CURDIR) $(VENV)/collections/ansible_collections/placement/upgrade
	echo "$(CURDIR)/$(VENV)/collections" > $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/placement_upgrade_collection.pth
	touch $(STAMP)

clean:
	rm -rf $(VENV) tests/output .pytest_cache .hypothesis out
