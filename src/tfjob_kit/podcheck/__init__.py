"""What the API server checks on the pods the operator makes from a TFJob, offline.

A port of what ``k8s.io/kubernetes/pkg/apis/core/validation`` (``ValidatePodCreate``,
``ValidatePodSpec``) and ``k8s.io/apimachinery`` (``ValidateObjectMeta``) enforce at the
Kubernetes release pinned in ``versions.toml``, with that release's default feature gates.
Every check names the Go function it mirrors.
"""
