# placement.upgrade: the two commands are `make demo` and `make test`.
#   make demo       run the main job (tools/demo.py) in the project venv;
#                   make demo DEMO_ARGS="--check" passes arguments to tools/demo.py
#   make test       make deps, then every test (.ci/test.sh): the unit stage (the later stages'
#                   venvs built beside it), then three lanes at once, each stopping at its first
#                   failing stage: nova-oracle -> twin-per-kind; cloud-twin-stage; and
#                   sanity -> core-matrix -> lint -> docs-lint -> publish -> molecule
#   make deps       the system packages the tests need (bindep.txt, profile test): says which
#                   are missing and installs them with apt-get as root (make test runs it first)
# Each stage is also a target of its own; see docs/development.md.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Tools (ansible-playbook, ansible-doc, ...) are called by other tools: put the venv first.
export PATH := $(CURDIR)/$(BIN):$(PATH)
COLLECTIONS := $(CURDIR)/$(VENV)/collections
STAGE := .ci/stage
SUMMARY := $(CURDIR)/tests/output/make-test-summary.txt

.PHONY: docs venv deps demo test unit sanity core-matrix lint ansible-lint changelog-lint build-check ee-check \
	docs-lint molecule nova-oracle upgrade-twin twin-per-kind clean role-readmes publish galaxy-import \
	docsite docsite-test sign-check

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

# make demo DEMO_ARGS="--check" (or "--unmapped compute-03", ...): arguments of tools/demo.py
demo: venv
	$(BIN)/python tools/demo.py $(DEMO_ARGS)

# Benchmarks (NOT part of `make test`): embedded vs real Placement, see docs/benchmarks.md.
#   make bench                       full run (~3 min);  make bench BENCH_ARGS="--quick"  (~30-60 s)
#   make bench BENCH_ARGS="--json out/bench.json"
.PHONY: bench
bench: venv
	$(BIN)/python benchmarks/bench_backends.py $(BENCH_ARGS)

# The backend matrix (issue 13 target 4): embedded, real Placement over HTTP, placement.direct;
#   make bench-matrix (~12 min on 2 quiet cores);  make bench-matrix BENCH_MATRIX_ARGS="--quick"  (~1.5 min)
.PHONY: bench-matrix
bench-matrix: venv
	$(BIN)/python benchmarks/bench_matrix.py $(BENCH_MATRIX_ARGS)

# Rolls of a 40-node fleet on MariaDB Placement (gunicorn, 4 workers) and SQLite, side by side
# (issue 28):  make bench-rolls (about 70 min);  make bench-rolls BENCH_ROLLS_ARGS="--quick" (about 10 min)
.PHONY: bench-rolls
bench-rolls: venv deps
	$(BIN)/python benchmarks/bench_rolls.py $(BENCH_ROLLS_ARGS)

# A node's nova-compute out of service with the nova steps on, timed by nova's cycle on a stand-in
# (issue 31):  make bench-nova-cycle (about 2.5 min at scale 0.1);  BENCH_NOVA_CYCLE_ARGS="--scale 0.05"
.PHONY: bench-nova-cycle
bench-nova-cycle: venv
	$(BIN)/python benchmarks/bench_nova_cycle.py $(BENCH_NOVA_CYCLE_ARGS)

# ---------------------------------------------------------------- make test
test: venv deps
	@.ci/test.sh $(SUMMARY)

# The system packages of the tests (bindep.txt, profile test: chromium, shellcheck), one
# printed step: what is missing, what apt-get installs (as root), or "deps: all present".
# Nothing else installs system packages.  DEPS_ARGS=--check only lists what is missing.
deps:
	@.ci/deps.sh $(DEPS_ARGS)

# a. pytest over tests/unit and tests/integration (PYTEST_ARGS defaults to "-n 2")
unit: venv
	@$(STAGE) unit .ci/unit.sh

# a2. nova 34.0.0 as the oracle: its libvirt driver starts on every fake host after our
#     reshape and must write nothing (own venv .venv-nova, built on first run)
nova-oracle:
	@$(STAGE) nova-oracle .ci/nova-oracle.sh

# a3. The upgrade twin: an older nova (31.x, 33.x, own venvs .venv-nova31 / .venv-nova33 built
#     on first run) writes the state through its own API, the new release (nova 34 or 33)
#     upgrades copies of its databases and judges our roll; see docs/upgrade-twin.md.
#     twin-per-kind (in make test): one release pair per reshape kind; upgrade-twin: every pair
twin-per-kind:
	@$(STAGE) twin-per-kind .ci/upgrade-twin.sh --per-kind

upgrade-twin:
	@$(STAGE) upgrade-twin .ci/upgrade-twin.sh

# a4. The cloud twin (issue 41, docs/cloud-twin.md): the control plane (MariaDB, RabbitMQ, Keystone and
#     Placement under uWSGI, nova-api/-conductor/-scheduler 34) and nova-compute nodes (fakelibvirt) as
#     processes on 127.0.0.1, rolled by playbooks/rolling_reshape.yml.  cloud-twin-stage is a stage of make test.
#     cloud-twin: every case;  cloud-twin-stage: the 2-node stage
.PHONY: cloud-twin cloud-twin-stage
cloud-twin: venv deps
	@$(STAGE) cloud-twin .ci/cloud-twin.sh $(CLOUD_TWIN_ARGS)

cloud-twin-stage: venv deps
	@$(STAGE) cloud-twin-stage .ci/cloud-twin.sh --stage $(CLOUD_TWIN_ARGS)

# NOT in make test: the slower duplicates of the unit stage's cases (pytest marker "extended": the
# reliability suite's SQLite twins of its MariaDB cases, the 40-node MariaDB rolls at serial 10,
# serial 20 and two rolls at once; the sliced roll on MariaDB, whose embedded twin the unit stage
# runs): 6 tests (4 of them: 988 s of test time at a load of 7 on 2026-12-01; the sliced roll 99 s
# and serial 20 172 s in the unit stage of a fresh-clone run)
.PHONY: extended
extended: venv deps
	@UNIT_MARKS=extended $(STAGE) extended .ci/unit.sh

# The quick lane for the edit-test loop (NOT part of `make test`): the unit tests that start
# neither the real Placement or Keystone nor a playbook (-m "not real and not slow")
.PHONY: check
check: venv
	@$(STAGE) check $(BIN)/python -m pytest -q -n 2 -m "not real and not slow" tests/unit $(CHECK_ARGS)

# b. ansible-test sanity on a private copy, --venv --python 3.11, offline, no ignore files
sanity: venv
	@$(STAGE) sanity .ci/sanity.sh

# c2. the unit tests again on ansible-core 2.18 (Python 3.11) and 2.22 (Python 3.13; its release
# candidate 2.22.0rc1 until 2.22.0 is out), the oldest release requires_ansible (>=2.18) claims and
# the newest, and ansible-test sanity on 2.22, each in its own venv (.venv-core-<v>); the stages above
# are 2.19's. make core-matrix-full: both on 2.18, 2.20 (Python 3.12), 2.21 and 2.22
core-matrix: venv
	@$(STAGE) core-matrix .ci/core-matrix.sh

# NOT in make test (each release's sanity builds ansible-test's venvs for it, 3-4 minutes a release on
# a fresh machine): the unit tests and sanity on every release, 2.18, 2.20, 2.21 and 2.22
.PHONY: core-matrix-full
core-matrix-full: venv
	@CORE_MATRIX_UNITS=all CORE_MATRIX_SANITY=all $(STAGE) core-matrix-full .ci/core-matrix.sh 2.18 2.20 2.21 2.22

# c. ansible-lint (production profile), changelog fragments, galaxy build + offline
#    install, execution-environment build context
lint: ansible-lint changelog-lint build-check ee-check

ansible-lint: venv
	@ANSIBLE_COLLECTIONS_PATH=$(COLLECTIONS) $(STAGE) ansible-lint $(BIN)/ansible-lint --nocolor

changelog-lint: venv
	@$(STAGE) changelog-lint .ci/changelog-lint.sh

build-check: venv
	@$(STAGE) build-check .ci/build-check.sh

ee-check: venv
	@$(STAGE) ee-check .ci/ee-check.sh

# d. the collection's documentation (plugin docs, markup, references)
docs-lint: venv
	@ANSIBLE_COLLECTIONS_PATH=$(COLLECTIONS) $(STAGE) docs-lint \
		$(BIN)/antsibull-docs lint-collection-docs --plugin-docs .
	@$(STAGE) module-docs-fresh .ci/module-docs.sh --check
	@$(STAGE) role-readmes-fresh $(BIN)/python .ci/role-readmes.py --check
	@$(STAGE) error-catalog-fresh $(BIN)/python .ci/error-catalog.py --check

# regenerate the error codes table of docs/operator-guide.md from errors.CATALOG (issue 44)
.PHONY: error-catalog
error-catalog: venv
	$(BIN)/python .ci/error-catalog.py

# regenerate roles/*/README.md from the roles' meta/argument_specs.yml
role-readmes: venv
	$(BIN)/python .ci/role-readmes.py

# d2. publishing (issue 43): Galaxy's own importer on the built tarball (own venv .venv-importer),
#     the docsite built with antsibull-docs + Sphinx and opened in headless Chromium, and AWX
#     content signing with ansible-sign (own venv .venv-publish); both venvs built on first run
publish: galaxy-import docsite-test sign-check

galaxy-import: venv
	@$(STAGE) galaxy-import .ci/galaxy-import.sh

# regenerate docs/docsite/rst/ (the docsite's extra docs) from the guides docs/*.md
.PHONY: docsite-guides
docsite-guides: venv
	.ci/tool-venv.sh .venv-publish .ci/requirements-publish.txt
	.venv-publish/bin/python .ci/docsite-guides.py

# the collection's HTML docs in build/docsite/html (open build/docsite/html/index.html)
docsite: venv
	@$(STAGE) docsite .ci/docsite.sh

docsite-test: docsite
	@$(STAGE) docsite-test $(BIN)/python -m pytest -q -n 0 -p no:cacheprovider tests/docsite

sign-check: venv
	@$(STAGE) sign-check .ci/sign-check.sh

# regenerate docs/modules/ from the plugins' documentation
docs: venv
	.ci/module-docs.sh

# e. molecule scenarios under extensions/molecule/ (none yet is not a failure)
molecule: venv
	@$(STAGE) molecule .ci/molecule.sh

clean:
	rm -rf $(VENV) .venv-nova .venv-core-* .venv-importer .venv-publish tests/output .pytest_cache .hypothesis out build/docsite

# Reliability figures (issue 12, a-c), the full run documented in docs/reliability.md (~40 min):
# concurrent writers, injected faults (REST proxy + server kills, embedded SIGKILLs) and the
# rolling playbook at serial 10 / forks 10.  `make test` runs the quick version
# (tests/reliability/test_reliability.py).  RELIABILITY_ARGS="--suite rest --faults 30 -v"
.PHONY: reliability
reliability: venv
	$(BIN)/python tests/reliability/run.py --full $(RELIABILITY_ARGS)
