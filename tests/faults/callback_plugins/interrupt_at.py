"""A test-only Ansible callback: press Ctrl-C at a given point of a run.

Enabled for one run with ``ANSIBLE_CALLBACK_PLUGINS=<this directory>`` and
``ANSIBLE_CALLBACKS_ENABLED=interrupt_at``. ``TFJOB_KIT_INTERRUPT_ROLE`` and
``TFJOB_KIT_INTERRUPT_TASK`` name the task (its role and its own name). When it starts, the plugin
prints ``INTERRUPT: SIGINT at <role> : <task>`` and sends SIGINT to the run's process group, as a
terminal does on Ctrl-C; ansible-playbook passes it on to its workers' process groups, so the
module and what it runs (helm) get it too.

With ``TFJOB_KIT_INTERRUPT_RELEASE=<namespace>/<name>`` the SIGINT waits, within that task, until
Helm has recorded a new revision of that release as pending (an install or upgrade under way): a
watch on the release's Secrets with the run's ``K8S_AUTH_KUBECONFIG``. The plugin then prints
``INTERRUPT: SIGINT at <role> : <task> while <release> is <status>``.

The run is expected to be started in a process group of its own.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from typing import Any

from ansible.plugins.callback import CallbackBase
from kubernetes import client
from kubernetes import config as _config
from kubernetes import watch as _watch

DOCUMENTATION = """
name: interrupt_at
type: aggregate
short_description: send SIGINT to the run at a named task (tests only)
description: Sends SIGINT to the run's process group when the task named by
  TFJOB_KIT_INTERRUPT_ROLE and TFJOB_KIT_INTERRUPT_TASK starts, or, with
  TFJOB_KIT_INTERRUPT_RELEASE, when that task's Helm release is pending.
requirements: [enabled in ANSIBLE_CALLBACKS_ENABLED]
"""

PENDING = ("pending-install", "pending-upgrade")
config: Any = _config  # untyped
watch: Any = _watch


class CallbackModule(CallbackBase):  # type: ignore[misc]
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "interrupt_at"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.role = os.environ.get("TFJOB_KIT_INTERRUPT_ROLE", "")
        self.task = os.environ.get("TFJOB_KIT_INTERRUPT_TASK", "")
        self.release = os.environ.get("TFJOB_KIT_INTERRUPT_RELEASE", "")
        self.sent = False

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        role = task._role.get_name(include_role_fqcn=False) if task._role else ""
        if self.sent or (role, task.name) != (self.role, self.task):
            return
        self.sent = True
        where = f"INTERRUPT: SIGINT at {role} : {task.name}"
        if not self.release:
            # The previous task's worker may still be handing its result over; killed while it
            # holds the results queue's lock, it would leave ansible-playbook waiting on it.
            deadline = time.monotonic() + 10
            while multiprocessing.active_children() and time.monotonic() < deadline:
                time.sleep(0.05)
            self._display.display(where)
            os.killpg(os.getpgrp(), signal.SIGINT)
            return
        # Listed here, before the task's worker starts helm; watched from that list's
        # resourceVersion, so no revision helm records afterwards is missed.
        namespace, name = self.release.split("/", 1)
        api = client.CoreV1Api(config.new_client_from_config(os.environ["K8S_AUTH_KUBECONFIG"]))
        selector = f"owner=helm,name={name}"
        listed = api.list_namespaced_secret(namespace, label_selector=selector)
        args = (
            api,
            namespace,
            selector,
            listed.metadata.resource_version if listed.metadata else None,
            where,
        )
        threading.Thread(target=self._interrupt_when_pending, args=args, daemon=True).start()

    def _interrupt_when_pending(
        self, api: Any, namespace: str, selector: str, version: str, where: str
    ) -> None:
        for event in watch.Watch().stream(
            api.list_namespaced_secret,
            namespace,
            label_selector=selector,
            resource_version=version,
            timeout_seconds=600,
        ):
            status = (event["object"].metadata.labels or {}).get("status", "")
            if status in PENDING:
                self._display.display(f"{where} while {self.release} is {status}")
                os.killpg(os.getpgrp(), signal.SIGINT)
                return
