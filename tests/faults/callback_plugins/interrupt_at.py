"""A test-only Ansible callback: press Ctrl-C when a given task starts.

Enabled for one run with ``ANSIBLE_CALLBACK_PLUGINS=<this directory>`` and
``ANSIBLE_CALLBACKS_ENABLED=interrupt_at``. ``TFJOB_KIT_INTERRUPT_ROLE`` and
``TFJOB_KIT_INTERRUPT_TASK`` name the task (the role it belongs to and its own name); when it
starts, the plugin prints ``INTERRUPT: SIGINT at <role> : <task>`` and sends SIGINT to the run's
process group, as a terminal does on Ctrl-C (ansible-playbook, its workers and whatever they
run get it). The run is expected to be started in a process group of its own.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: interrupt_at
type: aggregate
short_description: send SIGINT to the run when a named task starts (tests only)
description: Sends SIGINT to the run's process group when the task named by
  TFJOB_KIT_INTERRUPT_ROLE and TFJOB_KIT_INTERRUPT_TASK starts.
requirements: [enabled in ANSIBLE_CALLBACKS_ENABLED]
"""


class CallbackModule(CallbackBase):  # type: ignore[misc]
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "interrupt_at"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.role = os.environ.get("TFJOB_KIT_INTERRUPT_ROLE", "")
        self.task = os.environ.get("TFJOB_KIT_INTERRUPT_TASK", "")
        self.sent = False

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        role = task._role.get_name(include_role_fqcn=False) if task._role else ""
        if self.sent or (role, task.name) != (self.role, self.task):
            return
        self.sent = True
        self._display.display(f"INTERRUPT: SIGINT at {role} : {task.name}")
        os.killpg(os.getpgrp(), signal.SIGINT)
