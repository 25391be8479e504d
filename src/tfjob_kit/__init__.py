"""tfjob-kit: validate, explain, convert and deploy Kubeflow TFJobs."""

__version__ = "0.1.0"
