#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.gpu_facts: GPU node preflight from the NVIDIA driver."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: GPU node preflight - driver, CUDA version and GPUs as the NVIDIA driver reports them
version_added: 0.1.0
description:
  - Runs C(nvidia-smi) on the host to read the driver version, the highest CUDA version the
    driver supports, and each GPU (name, UUID, memory, compute capability, PCI bus).
  - Fails with a clear message when the driver is missing, is not loaded, or does not meet the
    requirements given.
  - Returns the facts and the Node labels they imply, in the names NVIDIA's GPU feature discovery
    uses (C(nvidia.com/gpu.present), C(nvidia.com/gpu.product), ...). The device plugin's node
    affinity needs these labels.
author:
  - tfjob-kit developers (@tfjob-kit)
options:
  nvidia_smi:
    description:
      - The nvidia-smi command, a name looked up on PATH or a path.
    type: str
    default: nvidia-smi
  min_driver_version:
    description:
      - Fail when the driver is older, for example V(535.104).
    type: str
  min_cuda_version:
    description:
      - Fail when the driver supports an older CUDA version, for example V(12.2).
    type: str
  min_gpus:
    description:
      - Fail when the host has fewer GPUs.
    type: int
    default: 1
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: Nothing changes.
  facts:
    support: full
    description: Sets C(tfjob_kit_gpu).
requirements:
  - python >= 3.11 on the GPU host (the module needs nothing else there; tfjob-kit is not required)
  - the NVIDIA driver (nvidia-smi)
seealso:
  - module: tfjob.kit.tfjob
"""

EXAMPLES = r"""
- name: Check the GPU host
  tfjob.kit.gpu_facts:
    min_driver_version: "535"
    min_cuda_version: "12.2"

- name: Show what was found
  ansible.builtin.debug:
    msg: "{{ tfjob_kit_gpu.count }} x {{ tfjob_kit_gpu.gpus[0].name }}, driver {{ tfjob_kit_gpu.driver_version }}"
"""

RETURN = r"""
ansible_facts:
  description: The facts, under C(tfjob_kit_gpu).
  returned: success
  type: complex
  contains:
    tfjob_kit_gpu:
      description: What the driver reports.
      returned: success
      type: dict
      contains:
        driver_version:
          description: The driver version.
          type: str
          sample: "570.124.06"
        cuda_version:
          description: The highest CUDA version the driver supports (null if not reported).
          type: str
          sample: "12.8"
        count:
          description: How many GPUs.
          type: int
          sample: 8
        gpus:
          description: Each GPU with index, name, uuid, memory_mib, compute_capability and pci_bus_id.
          type: list
          elements: dict
        labels:
          description: The Node labels these facts imply.
          type: dict
          sample: {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.tfjob.kit.plugins.module_utils.gpu import PreflightError, check, collect


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "nvidia_smi": {"type": "str", "default": "nvidia-smi"},
            "min_driver_version": {"type": "str"},
            "min_cuda_version": {"type": "str"},
            "min_gpus": {"type": "int", "default": 1},
        },
        supports_check_mode=True,
    )
    params = module.params
    try:
        facts = collect(params["nvidia_smi"])
    except PreflightError as exc:
        module.fail_json(msg=f"GPU preflight failed: {exc}")
    problems = check(
        facts, params["min_driver_version"], params["min_cuda_version"], params["min_gpus"]
    )
    result = {"ansible_facts": {"tfjob_kit_gpu": facts.as_dict()}}
    if problems:
        module.fail_json(msg="GPU preflight failed: " + "; ".join(problems), **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
