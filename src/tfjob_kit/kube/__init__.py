"""Talking to a Kubernetes cluster: connect, apply TFJobs server-side, wait, inspect, delete.

The Ansible modules (``plugins/modules``) and the CLI share this package; it holds all the logic,
the modules only map arguments and results.
"""
