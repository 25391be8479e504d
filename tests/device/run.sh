#!/usr/bin/env bash
# The device check: GPU node preflight (library, CLI and the tfjob.kit.gpu_facts module) against
# a real NVIDIA GPU and driver. Needs build/device-site (see tests/device/README.md) carried along.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src:$PWD/build/device-site"
export ANSIBLE_COLLECTIONS_PATH="$PWD/.collections" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0
PY=python3
status=0
run() { echo "+ $*"; "$@"; rc=$?; [ $rc -eq 0 ] || { echo "  -> exit $rc"; status=1; }; }
{
  run nvidia-smi
  run nvidia-smi "--query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id,driver_version" \
      --format=csv,noheader,nounits
  run $PY --version
} > "$OUT/nvidia-smi.txt" 2>&1
cat "$OUT/nvidia-smi.txt"
nvidia-smi > "$OUT/banner.txt" 2>&1
nvidia-smi "--query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id,driver_version" \
    --format=csv,noheader,nounits > "$OUT/query.csv" 2>&1
echo "== tfjob-kit gpu preflight"
run $PY -m tfjob_kit.cli gpu preflight --min-driver 525 --min-cuda 12.0
run $PY -m tfjob_kit.cli gpu preflight --format json
$PY -m tfjob_kit.cli gpu preflight --nvidia-smi /nonexistent/nvidia-smi; echo "missing driver -> exit $?"
echo "== ansible-playbook tests/device/gpu_preflight.yml"
run $PY -m ansible.cli.playbook -e ansible_python_interpreter=$PY tests/device/gpu_preflight.yml
exit $status
