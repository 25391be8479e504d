# tfjob-kit: `make demo` runs the main job, `make test` runs every test.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Python caches what it compiles (its default). An environment that turns that off makes every
# CLI, Ansible module and test process compile the library again.
unexport PYTHONDONTWRITEBYTECODE
# The files run on TEST_WORKERS pytest-xdist workers, each file whole on one worker (its clusters
# come up once), the longest first (tests/_budget.py). TEST_WORKERS=0 runs them in this process
# (needed with TFJOB_KIT_KUBECONFIG: the workers would share that one cluster).
TEST_WORKERS ?= 3
PYTEST_WORKERS := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

.PHONY: venv demo test test-versions lint typecheck sanity unit integration schemas schemas-check bench bench-apply bench-scale \
	bench-bad-input clean lock dist \
	cluster-build cluster-up cluster-down

venv: $(STAMP)

# Every dependency comes from the hashed locks (requirements/, `make lock`): first the runtime
# lock, the same file the CI examples install, then the tools the tests use; the project itself
# goes in last without dependencies (and without build isolation: hatchling is in the dev lock).
# The editable install copies what the wheel force-includes (the collection under
# ansible_collections/tfjob/kit), and tfjob_kit.gpu imports module_utils from there: reinstall
# when those files change.
$(STAMP): pyproject.toml requirements/runtime.txt requirements/dev.txt $(wildcard plugins/module_utils/*.py)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements/runtime.txt
	$(BIN)/pip install --quiet --require-hashes -r requirements/dev.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	touch $(STAMP)

# The hashed locks, for Linux, macOS and Windows and Python 3.11 to 3.13, after a change to
# pyproject.toml's dependencies; uv (from PyPI) resolves them and keeps the versions locked
# already: `make lock LOCK_UPGRADE=--upgrade` takes the newest releases pyproject.toml allows.
# validate.txt: tfjob-kit without extras (validate, explain, convert), the same versions.
LOCK_UPGRADE ?=
LOCK_OPTIONS := --universal --python-version 3.11 --generate-hashes --no-annotate --custom-compile-command "make lock" --quiet $(LOCK_UPGRADE)
lock: venv
	$(BIN)/pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --extra bootstrap $(LOCK_OPTIONS) -o requirements/runtime.txt
	$(BIN)/uv pip compile pyproject.toml -c requirements/runtime.txt $(LOCK_OPTIONS) -o requirements/validate.txt
	printf 'hatchling>=1.25\neditables\n' | $(BIN)/uv pip compile - pyproject.toml --extra dev --extra bench --extra plot \
		--extra bootstrap -c requirements/runtime.txt $(LOCK_OPTIONS) -o requirements/dev.txt

# CLUSTER=<name> runs it on another local cluster (default: $TFJOB_KIT_CLUSTER, else tfjob-kit).
demo: venv
	$(BIN)/python examples/demo.py $(if $(CLUSTER),--cluster $(CLUSTER))

# The repository's pre-commit hooks (.pre-commit-config.yaml) over every file: ruff format, ruff,
# mypy, yamllint and tfjob-kit validate, each from this environment.
lint: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pre-commit run --all-files --show-diff-on-failure

# The Ansible collection: ansible-test sanity (validate-modules, ansible-doc, import, ...) and
# ansible-lint's production profile.
sanity: venv
	$(BIN)/python tools/sanity.py
	$(BIN)/ansible-lint

typecheck: venv
	$(BIN)/mypy

# The pure tests (marker `pure`): nothing built, no Go, helm or cluster.
unit: venv
	$(BIN)/python -m pytest -m pure tests

# The local cluster: real control plane, kwok nodes, training-operator and Volcano processes.
# The build is cached per version (a no-op when cached; 30-40 min cold on 2 cores).
cluster-build: venv
	$(BIN)/tfjob-kit cluster build

# The release artifacts under dist/ (tools/dist.py): the wheel and sdist, the collection tarball,
# the packaged charts and their repository index; the same commit gives the same bytes.
dist: cluster-build
	$(BIN)/python tools/dist.py

cluster-up: cluster-build
	$(BIN)/tfjob-kit cluster up

cluster-down: venv
	$(BIN)/tfjob-kit cluster down

integration: cluster-build
	$(BIN)/python -m pytest $(PYTEST_WORKERS) tests/integration

# lint and sanity side by side (each mostly one process: 58 s together instead of 94).
test: cluster-build
	$(MAKE) --no-print-directory --jobs=2 --output-sync=target lint sanity
	$(BIN)/python -m pytest $(PYTEST_WORKERS) --durations=40 tests

# The differential tests on every Kubernetes minor the local cluster runs (versions.toml's
# [kubernetes] version and releases), the bootstrap on the oldest and the newest; each minor
# built on first use. Not part of `make test`. MINORS="1.37" runs those only.
test-versions: cluster-build
	$(BIN)/python tools/test_versions.py $(MINORS)

# Regenerate what is generated from schemas/ and the pinned Kubernetes OpenAPI (needs Go).
schemas: venv
	$(BIN)/python tools/gen_k8s_schema.py
	$(BIN)/python tools/gen_chart_crds.py
	$(BIN)/python tools/gen_feature_gates.py

schemas-check: venv
	$(BIN)/python tools/gen_k8s_schema.py --check
	$(BIN)/python tools/gen_chart_crds.py --check
	$(BIN)/python tools/gen_feature_gates.py --check

bench: venv
	$(BIN)/python bench/validate_bench.py

# Hostile YAML (the unit tests' bad-input and loader cases): tfjob-kit's loader beside PyYAML's
# CSafeLoader, as ratios; nothing built, a few minutes. ARGS="--only quotes" and so on.
bench-bad-input: venv
	$(BIN)/python bench/bad_input_bench.py $(ARGS)

# Applying 200 TFJobs: tfjob.kit.tfjob vs kubectl apply --server-side vs a kubernetes.core.k8s
# loop, on the local cluster (started if needed).
bench-apply: cluster-build
	$(BIN)/python bench/apply_bench.py

# A thousand simulated GPU nodes (8 GPUs each): 500 gang-scheduled TFJobs and one TFJob of
# 1,000 workers to Succeeded, submit.yml beside kubectl apply + wait. Not part of `make test`;
# about half an hour on 2 cores. ARGS="--only wide --keep" and so on pass options.
bench-scale: cluster-build
	$(BIN)/python bench/scale_bench.py $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache dist
