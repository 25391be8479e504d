#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.tfjob_info: what TFJobs (or Volcano Jobs) are doing."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: tfjob_info
short_description: Report what TFJobs are doing - phase, conditions, replicas, pods, events, logs
version_added: 0.1.0
description:
  - Reads one job, or every job of a namespace (or of the cluster) that matches a label selector.
  - For each job it returns the phase, the conditions, the replica statuses, the pods with
    their node and phase, the most recent events, and optionally the last lines of the chief's
    log (worker 0's log when there is no chief).
  - It also diagnoses each job as the wait of M(tfjob.kit.tfjob) does and returns the problems
    it finds, each naming the object and quoting the server (RV(jobs[].problems)). The
    O(tfjob.kit.tfjob#module:wait) option there says which problems are fatal and why.
author:
  - tfjob-kit developers (@tfjob-kit)
extends_documentation_fragment:
  - tfjob.kit.connection
options:
  name:
    description:
      - The job to read. Without it, every job matching O(namespace) and O(label_selector).
    type: str
  namespace:
    description:
      - The job's namespace. Without O(name), leave it out to list every namespace.
      - With O(name), defaults to V(default).
    type: str
  label_selector:
    description:
      - Only jobs whose labels match, for example C(team=vision,stage!=dev).
    type: str
  backend:
    description:
      - V(kubeflow) reads TFJobs; V(volcano) reads Volcano C(batch.volcano.sh) Jobs; V(trainer)
        reads Kubeflow Trainer v2 TrainJobs (their pods are their JobSet's, each pod's replica
        type its replicated job, C(node) for the workers).
    type: str
    choices: [kubeflow, volcano, trainer]
    default: kubeflow
  events:
    description:
      - How many of each job's most recent events to return (V(0) for none).
    type: int
    default: 10
  log_lines:
    description:
      - Return this many last lines of the chief's log, or worker 0's (V(0) for none).
    type: int
    default: 0
  unschedulable_grace:
    description:
      - Seconds a pod may stay C(Unschedulable) before RV(jobs[].problems) calls it fatal, as
        the O(tfjob.kit.tfjob#module:unschedulable_grace) of the wait does.
    type: int
    default: 60
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
seealso:
  - module: tfjob.kit.tfjob
"""

EXAMPLES = r"""
- name: Read one job with the tail of its chief's log
  tfjob.kit.tfjob_info:
    name: mnist
    namespace: training
    log_lines: 50
  register: mnist

- name: Show where its pods run
  ansible.builtin.debug:
    msg: "{{ mnist.jobs[0].pods | map(attribute='node') | list }}"

- name: Every failed job of a team
  tfjob.kit.tfjob_info:
    label_selector: team=vision
  register: vision

- name: Fail when any of them failed
  ansible.builtin.assert:
    that: vision.jobs | selectattr('phase', 'equalto', 'Failed') | list | length == 0
"""

RETURN = r"""
jobs:
  description: The jobs found, sorted by namespace and name; empty when none matches.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(TFJob) or C(Job) (Volcano).
      type: str
    api_version:
      description: The job's API version.
      type: str
    namespace:
      description: The job's namespace.
      type: str
    name:
      description: The job's name.
      type: str
    created:
      description: The job's creation timestamp.
      type: str
    phase:
      description: The latest true condition (TFJob) or phase (Volcano); C(Pending) before any.
      type: str
      sample: Running
    reason:
      description: The reason of that condition.
      type: str
    message:
      description: The message of that condition.
      type: str
    conditions:
      description: The status conditions.
      type: list
      elements: dict
    replica_statuses:
      description: Pods per replica type and state.
      type: dict
      sample: {PS: {active: 1}, Worker: {active: 2}}
    start_time:
      description: When the job started.
      type: str
    completion_time:
      description: When the job completed.
      type: str
    pods:
      description: The job's pods.
      type: list
      elements: dict
      sample:
        - name: mnist-worker-0
          replica_type: worker
          replica_index: "0"
          node: gpu-node-1
          phase: Running
          restarts: 0
          exit_codes: []
    events:
      description: The most recent events about the job, oldest first.
      type: list
      elements: dict
    problems:
      description:
        - Why the job is not progressing, as the server tells it, fatal ones first. A fatal
          problem is one that waiting cannot cure; the wait of M(tfjob.kit.tfjob) fails on it.
        - Reads the namespace's events and PodGroups and, when the scheduler reports the job
          unschedulable, the nodes (cluster-wide C(list) C(nodes)) and the Volcano queue. A
          check whose objects the credentials may not read is skipped.
      type: list
      elements: dict
      contains:
        object:
          description: The object, C(KIND NAMESPACE/NAME) (the job, a pod or a PodGroup).
          type: str
        kind:
          description: The object's kind.
          type: str
        name:
          description: The object's C(NAMESPACE/NAME).
          type: str
        reason:
          description:
            - The server's reason (an event's, a container status', a pod condition's, such as
              C(DeletionByPodGC) on a pod whose node is gone; a Kueue Workload condition's, such
              as C(Pending), C(Inadmissible) or C(Preempted)), or C(NeverFits) and
              C(QueueCapability) for a job bigger than the cluster or its queue.
            - C(NodeDeleted) (not fatal) for a pod of the job that was lost with its node, as
              the scheduler's events show (an earlier pod of that name, another uid, on a node
              the cluster no longer has). The message names the replica, the lost pod's uid, the
              node, and the pod of that name now, if any (the operator makes it again unless
              the replica's restartPolicy let the job fail).
          type: str
        message:
          description: The server's message, as is.
          type: str
        fatal:
          description: Whether waiting longer cannot help.
          type: bool
      sample:
        - object: Pod training/mnist-worker-0
          kind: Pod
          name: training/mnist-worker-0
          reason: ImagePullBackOff
          message: 'container tensorflow: Back-off pulling image "registry.example.com/mnist:1.0"'
          fatal: true
    queue:
      description:
        - Where a job submitted to Kueue (its label C(kueue.x-k8s.io/queue-name)) stands, from the
          Workload Kueue made for it (the namespace's Workloads are read only for such a job);
          null for the others and before Kueue made one. While it waits, or after an eviction,
          the Workload's reason and message are among the RV(jobs[].problems) too, fatal where it can
          never be admitted as things stand (its LocalQueue or ClusterQueue missing or inactive,
          more than the queue's maximum capacity asked for).
      type: dict
      contains:
        workload:
          description: The Workload's name.
          type: str
        state:
          description: C(Admitted), C(Waiting), C(Evicted) or C(Finished).
          type: str
        cluster_queue:
          description: The ClusterQueue that admitted it (empty before).
          type: str
        reason:
          description: Kueue's reason (C(Pending), C(Inadmissible), C(Preempted), ...).
          type: str
        message:
          description: Kueue's message, as is.
          type: str
        evicted:
          description:
            - The job's last eviction (C(reason) such as C(Preempted) or C(PodsReadyTimeout), and
              C(message)), kept once Kueue admits it again; null if it was never evicted.
          type: dict
        worker:
          description:
            - With MultiKueue, the worker cluster Kueue dispatched the job to (its
              C(MultiKueueCluster), the Workload's C(status.clusterName)), where its pods run;
              the job's status is copied back from there. Empty elsewhere.
          type: str
    log:
      description: The chosen pod's name and the last lines of its log.
      type: dict
      returned: when O(log_lines) > 0
      sample: {pod: mnist-chief-0, lines: ["step 100, loss 0.21"]}
"""

from typing import Any

from ansible_collections.tfjob.kit.plugins.module_utils.common import (
    KitModule,
    connection,
    connection_spec,
    require_library,
)


def argument_spec() -> dict[str, Any]:
    spec = {
        "name": {"type": "str"},
        "namespace": {"type": "str"},
        "label_selector": {"type": "str"},
        "backend": {
            "type": "str",
            "choices": ["kubeflow", "volcano", "trainer"],
            "default": "kubeflow",
        },
        "events": {"type": "int", "default": 10},
        "log_lines": {"type": "int", "default": 0},
        "unschedulable_grace": {"type": "int", "default": 60},
    }
    spec.update(connection_spec())
    return spec


def main() -> None:
    module = KitModule(argument_spec=argument_spec(), supports_check_mode=True)
    require_library(module)
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.info import Query, read
    from tfjob_kit.kube.params import from_params

    query = from_params(Query, module.params)
    try:
        jobs = read(connection(module), query)
    except KubeError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, jobs=jobs)


if __name__ == "__main__":
    main()
