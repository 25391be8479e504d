#!/usr/bin/env bash
# The device check: GPU node preflight against a real NVIDIA GPU and driver.
#  1. tfjob.kit.gpu_facts (tests/device/gpu_preflight.yml) from the collection alone: nothing on
#     PYTHONPATH but build/device-site (ansible-core only, see tests/device/README.md) and a
#     collections path with just this collection's galaxy.yml, meta and plugins; tfjob-kit,
#     jsonschema-rs and yaml-rs are not importable, and the check proves it first.
#  2. The library's re-export (tfjob_kit.gpu, standard library only) from src/ and the same
#     collection; and `tfjob-kit gpu preflight` where the CLI's own requirements are importable.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
ROOT=$PWD
PY=${PY:-python3}
SITE=${DEVICE_SITE:-$ROOT/build/device-site}
COLLECTIONS=$(mktemp -d)
trap 'rm -rf "$COLLECTIONS"' EXIT
mkdir -p "$COLLECTIONS/ansible_collections/tfjob/kit"
for name in galaxy.yml meta plugins; do
  ln -s "$ROOT/$name" "$COLLECTIONS/ansible_collections/tfjob/kit/$name"
done
export ANSIBLE_COLLECTIONS_PATH="$COLLECTIONS" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0
export OUT
status=0
run() { echo "+ $*"; "$@"; rc=$?; [ $rc -eq 0 ] || { echo "  -> exit $rc"; status=1; }; }
# missing_driver SAID COMMAND...: COMMAND must exit 1 and its output must hold SAID (the reason
# for a host without nvidia-smi); anything else (success, another exit, another message) fails.
missing_driver() {
  local said=$1 output rc
  shift
  echo "+ $*"
  output=$("$@" 2>&1)
  rc=$?
  echo "$output"
  if [ $rc -eq 1 ] && [[ $output == *"$said"* ]]; then
    echo "  -> exit 1 with the missing-driver reason, as expected"
  else
    echo "  -> exit $rc; expected exit 1 saying: $said"
    status=1
  fi
}
NO_DRIVER="/nonexistent/nvidia-smi not found: the NVIDIA driver is not installed on this host"
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

echo "== 1. tfjob.kit.gpu_facts with ansible-core only (PYTHONPATH=build/device-site)"
export PYTHONPATH="$SITE"
probe="import importlib.util as u, ansible.release as r
missing = [n for n in ('tfjob_kit', 'jsonschema_rs', 'yaml_rs') if u.find_spec(n) is None]
print('ansible-core', r.__version__, '- not importable:', ', '.join(missing))
raise SystemExit(0 if len(missing) == 3 else 1)"
run $PY -c "$probe"
run $PY -m ansible.cli.playbook -e "ansible_python_interpreter=$PY" tests/device/gpu_preflight.yml

echo "== 2. the library's re-export (tfjob_kit.gpu) and the CLI"
export PYTHONPATH="$ROOT/src:$COLLECTIONS:$SITE"
library="from tfjob_kit import gpu
facts = gpu.collect()
print(facts.driver_version, facts.cuda_version, facts.count, gpu.node_labels(facts)['nvidia.com/gpu.product'])
problems = gpu.check(facts, '525', '12.0')
print(problems or 'meets driver 525, CUDA 12.0')
raise SystemExit(1 if problems else 0)"
run $PY -c "$library"
nodriver="from tfjob_kit import gpu
try:
    gpu.collect('/nonexistent/nvidia-smi')
except gpu.PreflightError as exc:
    raise SystemExit(f'PreflightError: {exc}')
print('collected facts without nvidia-smi')"
missing_driver "PreflightError: $NO_DRIVER" $PY -c "$nodriver"
if $PY -c "import tfjob_kit.cli" 2>/dev/null; then
  run $PY -m tfjob_kit.cli gpu preflight --min-driver 525 --min-cuda 12.0
  run $PY -m tfjob_kit.cli gpu preflight --format json
  missing_driver "GPU preflight failed: $NO_DRIVER" \
    $PY -m tfjob_kit.cli gpu preflight --nvidia-smi /nonexistent/nvidia-smi
else
  echo "tfjob-kit's CLI requirements (PyYAML, jsonschema-rs, yaml-rs) are not importable: CLI skipped"
fi
exit $status
