#!/usr/bin/env bash
# Prepare and run the local-cluster integration tests in CI.
#
#   tools/ci-cluster.sh build   # build every pinned binary into the cache (no-op when cached)
#   tools/ci-cluster.sh test    # bring the cluster up, run tests/integration, tear it down
#
# Cache these between CI runs to make warm runs take minutes:
#   $(go env GOMODCACHE)  $(go env GOCACHE)  ${TFJOB_KIT_CACHE:-~/.cache/tfjob-kit}/bin
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"
# Builds run one at a time with `go build -p 2 -trimpath` under nice (see build.py).

case "${1:-test}" in
  build)
    time "$PY" -m tfjob_kit.cluster build
    ;;
  test)
    "$PY" -m tfjob_kit.cluster build
    "$PY" -m pytest tests/integration -m integration -v --durations=10
    ;;
  *)
    echo "usage: $0 build|test" >&2
    exit 2
    ;;
esac
