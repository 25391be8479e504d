"""The custom resources the toolkit applies, addressed without API discovery."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    installed_by: str  # what installs the CRD, named in the "not installed" error
    job_label: str  # the label its pods and services carry, valued with the job's name
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    def selector(self, name: str) -> str:
        return f"{self.job_label}={name}"

    def describe(self, namespace: str, name: str) -> str:
        return f"{self.kind} {namespace}/{name}"


TFJOB = Resource(
    "kubeflow.org",
    "v1",
    "tfjobs",
    "TFJob",
    "the tfjob.kit.training_operator role (playbooks/site.yml)",
    "training.kubeflow.org/job-name",
)
VOLCANO_JOB = Resource(
    "batch.volcano.sh",
    "v1alpha1",
    "jobs",
    "Job",
    "the tfjob.kit.volcano role (playbooks/site.yml with tfjob_kit_scheduler: volcano)",
    "volcano.sh/job-name",
)

_TRAINER = (
    "Kubeflow Trainer v2 (charts/jobset and charts/trainer; `tfjob-kit cluster up --trainer`)"
)
_JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
TRAINJOB = Resource(
    "trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob", _TRAINER, _JOBSET_NAME
)
TRAINING_RUNTIME = Resource(
    "trainer.kubeflow.org", "v1alpha1", "trainingruntimes", "TrainingRuntime", _TRAINER, ""
)
CLUSTER_TRAINING_RUNTIME = Resource(
    "trainer.kubeflow.org",
    "v1alpha1",
    "clustertrainingruntimes",
    "ClusterTrainingRuntime",
    _TRAINER,
    "",
    namespaced=False,
)
TRAINER_KINDS = {r.kind: r for r in (TRAINJOB, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME)}

_KUEUE = (
    "Kueue (the tfjob.kit.kueue role: playbooks/site.yml with tfjob_kit_scheduler: kueue; "
    "`tfjob-kit cluster up --kueue`)"
)
LOCAL_QUEUE = Resource("kueue.x-k8s.io", "v1beta2", "localqueues", "LocalQueue", _KUEUE, "")
CLUSTER_QUEUE = Resource(
    "kueue.x-k8s.io", "v1beta2", "clusterqueues", "ClusterQueue", _KUEUE, "", namespaced=False
)
WORKLOAD = Resource("kueue.x-k8s.io", "v1beta2", "workloads", "Workload", _KUEUE, "")
MULTIKUEUE_CLUSTER = Resource(
    "kueue.x-k8s.io",
    "v1beta2",
    "multikueueclusters",
    "MultiKueueCluster",
    _KUEUE,
    "",
    namespaced=False,
)
