#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.tfjob: validate TFJobs, then apply (or delete) them idempotently."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: tfjob
short_description: Validate Kubeflow TFJobs, then apply or delete them idempotently
version_added: 0.1.0
description:
  - Loads TFJobs from files, directories or a definition, validates every document with the
    tfjob-kit library (the JSON Schema of C(kubeflow.org/v1) TFJobs plus the training-operator's
    own rules and known pitfalls), and only when all of them pass applies them with server-side
    apply.
  - All or nothing. Every object is first applied as a server-side dry run. Only when the API
    server accepts all of them are the changed ones applied. An invalid document fails the task,
    naming file, document and JSON path, and nothing is created.
  - Can convert the jobs to Volcano C(batch.volcano.sh) Jobs (O(backend=volcano)), convert legacy
    and T9k jobs (O(convert=true)), and wait until the jobs reach any of several conditions,
    ending the wait at once on a failure condition.
  - Check mode is a server-side dry run. Diff mode shows each object before and after.
  - Secret environment values are never shown. The value of an C(env) entry whose name says it is
    secret is replaced by C(********) in RV(objects), the diff, RV(findings), messages and the
    module's invocation; the cluster receives the real value. A name says it is secret when it
    contains C(PASSWORD), C(PASSWD), C(PASSPHRASE), C(SECRET), C(CREDENTIAL), C(PRIVATE) or
    C(CONNECTION_STRING), or has a word (split at C(_), C(-), C(.) and lowerUpper case changes,
    case-insensitive) that is C(PASS), C(PWD), C(AUTH), C(OAUTH), C(AUTHORIZATION), C(BEARER),
    C(CREDS), C(JWT), C(COOKIE), C(SALT), C(DSN), C(PAT) or C(KEYTAB), or ends in C(TOKEN),
    C(TOKENS), C(KEY) or C(KEYS), or pairs C(URL) or C(URI) with a data store (C(DATABASE_URL),
    C(MONGODB_URI), C(REDIS_URL)). So C(DB_PASSWORD), C(HF_TOKEN), C(apiKey),
    C(AWS_SECRET_ACCESS_KEY) and C(SENTRY_DSN) are masked; C(TOKENIZERS_PARALLELISM), C(KEYSPACE)
    and C(MODEL_URL) are not. A password in a URL (C(scheme://user:password@host)) is masked in
    every value and message, whatever the name.
  - In free text secret values of 6 or more characters are masked wherever they appear (shorter
    ones, such as C(true) or C(1), only in findings about that env entry). A change of a secret value
    alone shows as a change whose before and after both read C(********). Better still, take
    secrets from a Secret with C(valueFrom).
author:
  - tfjob-kit developers (@tfjob-kit)
extends_documentation_fragment:
  - tfjob.kit.connection
options:
  src:
    description:
      - Files or directories of YAML manifests (several documents per file allowed; directories
        are read for C(*.yaml), C(*.yml) and C(*.json)).
      - A relative path is relative to the directory the module runs in, which for a play on
        C(localhost) is the playbook's directory; C({{ playbook_dir }}/jobs) makes that explicit.
      - Mutually exclusive with O(definition).
    type: list
    elements: path
  definition:
    description:
      - The TFJobs (or TrainJobs and TrainingRuntimes) themselves, as a dictionary, a list of
        dictionaries, or YAML text (several documents allowed).
      - Mutually exclusive with O(src).
    type: raw
  state:
    description:
      - V(present) applies the jobs. V(absent) deletes them, and the garbage collector removes
        their pods and services.
    type: str
    choices: [present, absent]
    default: present
  namespace:
    description:
      - Namespace for documents that do not name one. A document naming a different namespace
        fails the task.
      - Defaults to the namespace of the kubeconfig context, then V(default).
    type: str
  field_manager:
    description:
      - The field manager of the server-side apply.
    type: str
    default: tfjob-kit
  force_conflicts:
    description:
      - Take over fields that another field manager owns instead of failing with a conflict.
    type: bool
    default: false
  validate:
    description:
      - V(strict) fails the task on error-level findings. Warnings are returned and shown.
      - V(warn) shows every finding as a warning and applies anyway. The API server still has
        the last word.
      - V(off) skips validation.
      - The pods are judged as the API server of the cluster's Kubernetes minor judges them,
        with that minor's default feature gates (the nearest minor tfjob-kit supports when the
        cluster runs another); a template field that minor drops is a C(field-dropped) warning.
      - Documents that are not valid YAML, or not TFJobs, always fail the task.
    type: str
    choices: [strict, warn, 'off']
    default: strict
  rules:
    description:
      - Rule overrides, as a mapping from rule id to V(off), V(error), V(warning) or V(info).
      - Run C(tfjob-kit rules) to list the rule ids.
    type: dict
    default: {}
  backend:
    description:
      - V(kubeflow) applies TFJobs, which the training-operator runs.
      - V(volcano) converts each TFJob to a Volcano C(batch.volcano.sh/v1alpha1) Job and applies
        that. Its pods build C(TF_CONFIG) from Volcano's host files.
      - V(trainer) converts each TFJob to a Kubeflow Trainer v2 C(TrainJob), as
        C(tfjob-kit convert --to trainjob) does, with the C(TrainingRuntime) of its own it needs
        (a workers-only job runs on the C(ClusterTrainingRuntime) C(tensorflow-multiworker) the
        toolkit ships, which must be installed), and applies them, each pod's C(TF_CONFIG) an
        env value. What the conversion changed or dropped is among the warnings.
      - TrainJobs and TrainingRuntimes in the input are applied as they are, whatever the
        backend. A TrainJob's runtime in the input is stored first, since Trainer's webhook
        refuses a TrainJob whose runtime does not exist; when the TrainJob's dry run then fails,
        the runtime just created is deleted again, and nothing is left applied.
    type: str
    choices: [kubeflow, volcano, trainer]
    default: kubeflow
  queue:
    description:
      - The Kueue C(LocalQueue) of the jobs' namespace to submit them to, set as each TFJob's and
        TrainJob's label C(kueue.x-k8s.io/queue-name). Kueue then creates them suspended and
        starts each once its C(ClusterQueue) can admit all of it. A document whose label names
        another queue fails the task. Not with O(backend=volcano) (Kueue does not manage
        Volcano Jobs).
      - The preflight checks that the C(LocalQueue) exists, that its C(ClusterQueue) is active and
        can ever admit the job (its quota plus what it may borrow), and that Kueue took the job
        (its webhook suspended the dry run; otherwise Kueue is not installed, or the job's
        integration, C(kubeflow.org/tfjob) or C(trainer.kubeflow.org/trainjob), is not enabled).
      - Jobs that already carry the label are checked the same way without this option.
    type: str
  convert:
    description:
      - Convert legacy TFJobs (C(kubeflow.org/v1alpha1), C(v1alpha2), C(v1beta1), C(v1beta2)) and
        T9k C(TensorFlowTrainingJob)s to C(kubeflow.org/v1) TFJobs before validating them.
      - Without it such documents fail the task.
    type: bool
    default: false
  wait:
    description:
      - Wait until every job reaches one of the O(wait_for) conditions. With O(state=absent),
        wait until the jobs, their pods and their services are gone.
      - The wait watches the jobs, their pods, their Volcano PodGroups and the namespace's events
        (watches, not a request per job per second; a broken watch is listed and watched again,
        and the wait still ends at O(wait_timeout)). It ends at once, failing the task, when a
        job cannot succeed however long it waits. The message names the object and quotes the
        server's reason, and RV(jobs[].problems) lists every problem it saw. These are fatal.
      - C(FailedCreatePod) or C(FailedCreateService) events of the job (C(FailedCreate) for a
        Volcano Job). The API server rejected
        a pod or Service the operator builds from the job, and the operator retries the same
        template forever (for example for a volumeMount that names no volume of the pod).
        Rejections that can pass by themselves (an exceeded ResourceQuota, an admission webhook
        that cannot be reached) are listed but not fatal, except a webhook that has failed for
        over 60 s and still fails (its server is gone; C(tfjob-kit webhooks) and
        M(tfjob.kit.admission_info) name the configuration left behind).
      - C(ErrImagePull), C(ImagePullBackOff), C(InvalidImageName) (and the kubelet's
        C(ErrImageNeverPull), C(RegistryUnavailable), C(SignatureValidationFailed)) in a
        container status. The image will not come; the other pods hold their resources and
        wait for this one.
      - C(CrashLoopBackOff) of a pod that decides the job's success. That is every Chief or
        Master, else worker 0, or every worker with C(successPolicy) V(AllWorkers). A crash loop
        of another replica is listed, not fatal.
      - A pod the scheduler reports C(Unschedulable) for longer than O(unschedulable_grace), with
        the scheduler's message, unless a node autoscaler announced nodes for it
        (cluster-autoscaler's C(TriggeredScaleUp), Karpenter's C(Nominated)).
      - A job that can never fit. Either it requests more of a resource than all nodes can
        allocate together, or one pod requests more than the largest node, and the scheduler (a
        pod condition or a PodGroup event) has reported it unschedulable for 10 seconds with no
        scale-up under way. Or its PodGroup's C(minResources) exceed its Volcano queue's
        C(capability), quoting Volcano's C(queue resource quota insufficient).
      - A job submitted to Kueue (O(queue)) that Kueue will never admit as things stand, in the
        words of its Workload, which the wait then watches too (C(workloads.kueue.x-k8s.io)).
        Its C(LocalQueue) or C(ClusterQueue) does not exist, the C(ClusterQueue) is inactive, or
        the job asks for more than the queue's maximum capacity. Waiting for quota, and an
        eviction (preempted, or pods not ready in time, and requeued by Kueue), are listed, not
        fatal, and RV(jobs[].queue) says where the job stands.
      - Transient states do not fail the wait. Pods Pending while nodes scale up or start, a
        PodGroup Pending or Inqueue that could fit, C(ContainerCreating), a crash loop of a
        replica that does not decide success. Reading nodes and queues needs cluster-wide
        C(list) C(nodes) and C(get) C(queues.scheduling.volcano.sh); without them those checks
        are skipped. The wait also needs C(watch) (else C(list) every 2 seconds) on the jobs,
        C(pods) and C(events), and C(podgroups.scheduling.volcano.sh) where Volcano runs.
    type: bool
    default: false
  wait_for:
    description:
      - The conditions that end the wait successfully; any one of them is enough.
      - For Volcano Jobs, C(Completed) also counts as V(Succeeded), and C(Aborted) and
        C(Terminated) also count as V(Failed). For TrainJobs, C(Complete) also counts as
        V(Succeeded); a TrainJob is C(Created) until a pod of its JobSet runs, then C(Running).
    type: list
    elements: str
    choices: [Created, Suspended, Running, Restarting, Succeeded, Failed, Pending, Completed,
              Aborted, Terminated, Complete]
    default: [Succeeded]
  fail_on:
    description:
      - Conditions that end the wait at once and fail the task, with the job's reason and the
        failed pods.
    type: list
    elements: str
    choices: [Created, Suspended, Running, Restarting, Succeeded, Failed, Pending, Completed,
              Aborted, Terminated, Complete]
    default: [Failed]
  wait_timeout:
    description:
      - Seconds to wait before failing.
    type: int
    default: 600
  unschedulable_grace:
    description:
      - Seconds a pod of the job may stay C(Unschedulable) (the scheduler found no node for it)
        before the wait fails with the scheduler's message. Until then it is listed in
        RV(jobs[].problems) but not fatal, so that nodes can scale up or free up.
      - A job that can never fit (more than the cluster or its queue has) fails sooner; see
        O(wait).
    type: int
    default: 60
  preflight:
    description:
      - With O(state=present), also ask the cluster about what the training-operator will create
        from each TFJob, before anything is stored, in check mode too. One pod per replica type
        (the highest index), its headless Service and, for a gang job (one with
        C(spec.runPolicy.schedulingPolicy)), its Volcano PodGroup are created as server-side dry
        runs, all in parallel, so
        validation, the namespace's Pod Security level, LimitRange and ResourceQuota, the
        ServiceAccount and PriorityClass admission and admission webhooks answer as they will
        answer the operator.
      - The Secrets, ConfigMaps and PersistentVolumeClaims the pods name (unless marked
        optional), their ServiceAccount and PriorityClass, and the Volcano queue of a gang job
        must exist; a pod's dry run does not check those, and without them the pods wait forever.
      - Each ResourceQuota of the namespace is checked against the whole job (every replica's
        requests and limits, and the pod count), not one pod. A job already on the cluster is not
        summed again.
      - A problem fails the task and nothing is created; the message names the object, the JSON
        path in the TFJob and the server's reason. Rule ids C(server-rejects-pod),
        C(server-rejects-service), C(server-rejects-podgroup), C(quota-exceeded) and
        C(missing-reference) can be re-levelled
        or turned off with O(rules).
      - Permissions it uses, in the job's namespace unless said otherwise; a dry run stores
        nothing. C(create) C(pods) and C(services) (with dryRun), C(create)
        C(podgroups.scheduling.volcano.sh)
        (gang jobs), C(get) C(serviceaccounts), C(secrets), C(configmaps) and
        C(persistentvolumeclaims) (metadata only is read), C(list) C(resourcequotas), and
        cluster-wide C(get) C(priorityclasses.scheduling.k8s.io) and
        C(queues.scheduling.volcano.sh). When the credentials lack one, that part is skipped
        with a warning (rule C(preflight-incomplete)) naming the verb, resource and namespace.
      - Jobs this field manager last applied unchanged are not asked about again. With
        O(backend=volcano) nothing is checked (Volcano creates those pods).
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: A server-side dry run of every object, and the preflight (O(preflight)). It reports what would change and stores nothing.
  diff_mode:
    support: full
    description: Each changed object before and after, without the fields the server manages.
seealso:
  - module: tfjob.kit.tfjob_info
  - module: kubernetes.core.k8s
"""

EXAMPLES = r"""
- name: Apply every TFJob of a directory and wait until they all succeed
  tfjob.kit.tfjob:
    src: jobs/
    namespace: training
    wait: true
    wait_for: [Succeeded]
    fail_on: [Failed]
    wait_timeout: 1800

- name: Apply one job defined inline; a warning-level rule becomes an error
  tfjob.kit.tfjob:
    kubeconfig: "{{ lookup('ansible.builtin.env', 'HOME') }}/.kube/config"
    context: gpu-cluster
    definition:
      apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata:
        name: mnist
        namespace: training
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: 2
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                  - name: tensorflow
                    image: registry.example.com/mnist:1.0
    rules:
      image-latest: error

- name: Run the same training as a Volcano gang-scheduled Job
  tfjob.kit.tfjob:
    src: jobs/dist-mnist.yaml
    backend: volcano
    wait: true

- name: Submit a T9k TensorFlowTrainingJob, converted to a TFJob
  tfjob.kit.tfjob:
    src: legacy/t9k-job.yaml
    convert: true

- name: Remove the jobs with their pods and services
  tfjob.kit.tfjob:
    src: jobs/
    namespace: training
    state: absent
    wait: true
"""

RETURN = r"""
changed:
  description: Whether any job was created, updated or deleted (or would be, in check mode).
  returned: always
  type: bool
jobs:
  description: One entry per job, in input order.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(TFJob), with O(backend=volcano) the Volcano C(Job), and C(TrainJob).
      type: str
      sample: TFJob
    api_version:
      description: The job's API version.
      type: str
      sample: kubeflow.org/v1
    namespace:
      description: The job's namespace.
      type: str
    name:
      description: The job's name.
      type: str
    source:
      description: The file the job came from (V(definition) for O(definition)).
      type: str
    document:
      description: The document's 1-based position in its source.
      type: int
    action:
      description: What happened (or would happen, in check mode).
      type: str
      sample: created
      choices: [created, updated, unchanged, deleted, absent]
    changed:
      description: Whether this job changed.
      type: bool
    tf_config:
      description:
        - The TF_CONFIG the training-operator gives the job's pods, once per job (its size grows
          linearly with the pod count).
        - 'The TF_CONFIG of pod P is C({"cluster": cluster, "task": tasks[P], "environment":
          environment}).'
        - 'With C(sparse) (C(enableDynamicWorker)) each pod gets only its own address instead:
          worker I gets C({"cluster": {"worker": {"I": cluster.worker[I]}, "ps": cluster.ps},
          "task": tasks[P]}), parameter server I gets C({"cluster": {"worker": {}, "ps":
          [cluster.ps[I]]}, "task": tasks[P]}).'
        - Empty for Volcano Jobs, whose pods build it from Volcano's host files, for jobs of one pod,
          which get no TF_CONFIG, and for jobs of more than 2,000 pods.
      type: dict
      contains:
        cluster:
          description: Every replica's address by lower-case replica type, as in TF_CONFIG.
          type: dict
        tasks:
          description: Each pod's task (C(type), C(index)) by pod name.
          type: dict
        environment:
          description: V(cloud); absent when C(sparse).
          type: str
        sparse:
          description: Whether the job uses C(enableDynamicWorker), where each pod sees only its own address.
          type: bool
      sample:
        cluster:
          worker: ["mnist-worker-0.training.svc:2222", "mnist-worker-1.training.svc:2222"]
        environment: cloud
        sparse: false
        tasks:
          mnist-worker-0: {type: worker, index: 0}
          mnist-worker-1: {type: worker, index: 1}
    phase:
      description: The job's latest true condition (TFJob) or phase (Volcano), C(Pending) before any.
      type: str
      sample: Succeeded
    reason:
      description: The reason of that condition.
      type: str
    message:
      description: The message of that condition.
      type: str
    conditions:
      description: The job's status conditions, as the server reports them.
      type: list
      elements: dict
    replica_statuses:
      description: Pods per replica type and state (TFJob), or per task and state (Volcano).
      type: dict
      sample: {Worker: {succeeded: 2}}
    start_time:
      description: When the job started, if it has.
      type: str
    completion_time:
      description: When the job completed, if it has.
      type: str
    problems:
      description:
        - What kept the job from progressing when the wait ended, as the server tells it (see
          O(wait) for which problems are fatal). Empty without O(wait).
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
          description: The server's reason (an event's, a container status', a pod condition's,
            a Kueue Workload condition's such as C(Pending), C(Inadmissible) or C(Preempted)),
            or C(NeverFits) and C(QueueCapability) for a job bigger than the cluster or its queue.
          type: str
        message:
          description: The server's message, as is.
          type: str
        fatal:
          description: Whether it ended the wait (waiting longer cannot help).
          type: bool
      sample:
        - object: TFJob training/mnist
          kind: TFJob
          name: training/mnist
          reason: FailedCreatePod
          message: 'Error creating: Pod "mnist-worker-0" is invalid:
            spec.containers[0].volumeMounts[0].name: Not found: "ckpt"'
          fatal: true
    queue:
      description:
        - Where a job submitted to Kueue (its label C(kueue.x-k8s.io/queue-name)) stands, from its
          Workload, once Kueue made one; null for the others and without O(wait).
        - While it waits for quota the wait goes on, and the Workload's reason and message are also
          among the RV(jobs[].problems); a missing C(LocalQueue) or C(ClusterQueue), an inactive one, or a
          job larger than the queue can ever admit ends the wait at once. An eviction (preempted by
          a job of higher priority, or pods not ready in time) is reported; Kueue requeues the job.
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
      sample:
        workload: tfjob-mnist-1a2b3
        state: Waiting
        cluster_queue: ""
        reason: Pending
        message: "couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed"
objects:
  description:
    - The objects as the API server holds them after the apply (or would hold them, in check mode).
    - Secret environment values read C(********) (see the description).
  returned: when O(state=present)
  type: list
  elements: dict
findings:
  description: Validation findings of every document, with rule id, severity, message, file, document and JSON path.
  returned: always
  type: list
  elements: dict
  sample:
    - rule: image-latest
      severity: warning
      message: "image 'tensorflow/tensorflow:latest' uses the latest tag"
      path: $.spec.tfReplicaSpecs.Worker.template.spec.containers[0].image
      file: jobs/mnist.yaml
      document: 1
      line: 1
      column: null
duration:
  description: Seconds the task took, waiting included.
  returned: always
  type: float
"""

from typing import Any

from ansible_collections.tfjob.kit.plugins.module_utils.common import (
    KitModule,
    connection,
    connection_spec,
    require_library,
)

# A copy of tfjob_kit.kube.status.WAIT_CONDITIONS: the argument spec is built before the module
# knows the library is importable (require_library), and DOCUMENTATION's choices are literal YAML.
# tests/unit/test_drift.py holds the three equal.
CONDITIONS = [
    "Created",
    "Suspended",
    "Running",
    "Restarting",
    "Succeeded",
    "Failed",
    "Pending",
    "Completed",
    "Aborted",
    "Terminated",
    "Complete",
]


def argument_spec() -> dict[str, Any]:
    spec = {
        "src": {"type": "list", "elements": "path"},
        "definition": {"type": "raw"},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "namespace": {"type": "str"},
        "field_manager": {"type": "str", "default": "tfjob-kit"},
        "force_conflicts": {"type": "bool", "default": False},
        "validate": {"type": "str", "choices": ["strict", "warn", "off"], "default": "strict"},
        "rules": {"type": "dict", "default": {}},
        "backend": {
            "type": "str",
            "choices": ["kubeflow", "volcano", "trainer"],
            "default": "kubeflow",
        },
        "queue": {"type": "str"},
        "convert": {"type": "bool", "default": False},
        "wait": {"type": "bool", "default": False},
        "wait_for": {
            "type": "list",
            "elements": "str",
            "choices": CONDITIONS,
            "default": ["Succeeded"],
        },
        "fail_on": {
            "type": "list",
            "elements": "str",
            "choices": CONDITIONS,
            "default": ["Failed"],
        },
        "wait_timeout": {"type": "int", "default": 600},
        "unschedulable_grace": {"type": "int", "default": 60},
        "preflight": {"type": "bool", "default": True},
    }
    spec.update(connection_spec())
    return spec


def main() -> None:
    module = KitModule(
        argument_spec=argument_spec(),
        supports_check_mode=True,
        mutually_exclusive=[("src", "definition")],
        required_one_of=[("src", "definition")],
    )
    require_library(module)
    from tfjob_kit.kube.params import from_params
    from tfjob_kit.kube.task import Request, TaskError, run

    request = from_params(
        Request,
        module.params,
        check_mode=module.check_mode,
        diff=module._diff,
        connection=connection(module),
    )
    try:
        result = run(request)
    except TaskError as exc:
        for warning in exc.result.pop("warnings", []):
            module.warn(warning)
        module.fail_json(msg=str(exc), **exc.result)
    for warning in result.pop("warnings"):
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
