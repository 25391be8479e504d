"""Jobs as a person following them reads them (``tfjob-kit status`` and ``wait``): the phase,
the replicas by state, each problem in the server's words, and what to do about it.

Pure: the dicts are what ``kube/info.py`` describes (a job with its pods) and what
``kube/status.py`` reads (``JobStatus.as_dict()``), the module's result shapes.
"""

from __future__ import annotations

from typing import Any

from tfjob_kit.kube import diagnose

# What to do about a problem, by the reason diagnose.py gives it (the server's own reason).
_ADVICE = {
    **dict.fromkeys(
        diagnose.CREATE_FAILURES,
        "the API server refused an object made from the job's spec: fix the field its message "
        "names (`tfjob-kit validate --server` finds these before anything is applied)",
    ),
    **dict.fromkeys(
        diagnose.IMAGE_FAILURES,
        "check the image's name and tag, and the pull secret (imagePullSecrets) of a private "
        "registry",
    ),
    "CrashLoopBackOff": "the container keeps exiting: read its log "
    "(`tfjob-kit status NAME --log-lines 50`)",
    "Unschedulable": "no node has room for the pod: lower its requests, check its node "
    "selector and tolerations, or add nodes",
    "NeverFits": "no node of the cluster can ever hold the pod: lower its requests or add a "
    "node large enough",
    "QueueCapability": "the job asks for more than its Volcano queue may give: use another "
    "queue or raise the queue's capability",
    "NodeDeleted": "the pod's node is gone: the operator's restart policy decides what follows",
    "DisruptionTarget": "the pod was evicted or preempted: the restart policy decides what follows",
}
_WORKLOAD_ADVICE = "Kueue holds the job: check its LocalQueue and ClusterQueue (their quota)"


def advice(problem: dict[str, Any]) -> str:
    """What to do about a problem (a ``Problem.as_dict()``), or "" when there is nothing to
    add to the server's words."""
    found = _ADVICE.get(str(problem.get("reason")), "")
    if not found and problem.get("kind") == "Workload":
        return _WORKLOAD_ADVICE
    return found


def replicas(replica_statuses: dict[str, Any]) -> str:
    """``Chief 1 succeeded; Worker 2 active`` from a job's replica statuses (TFJob replica
    types, TrainJob replicated jobs, a Volcano Job's tasks and counts)."""
    parts = []
    for name, counts in sorted(replica_statuses.items()):
        if isinstance(counts, dict):
            said = ", ".join(
                f"{value} {state}"
                for state, value in sorted(counts.items())
                if isinstance(value, int) and value and state != "selector"
            )
            if said:
                parts.append(f"{name} {said}")
        elif isinstance(counts, int) and counts:
            parts.append(f"{counts} {name}")
    return "; ".join(parts) or "no pods yet"


def headline(job: dict[str, Any]) -> str:
    """``TFJob default/dist-mnist: Running (Worker 2 active)``."""
    line = f"{job['kind']} {job['namespace']}/{job['name']}: {job.get('phase') or 'Pending'}"
    return f"{line} ({replicas(job.get('replica_statuses') or {})})"


def problem_lines(problems: list[dict[str, Any]]) -> list[str]:
    """Each problem in the server's words, then what to do."""
    lines = []
    for problem in problems:
        fatal = " (it will not pass by itself)" if problem.get("fatal") else ""
        lines.append(f"  {problem['object']}: {problem['reason']}: {problem['message']}{fatal}")
        todo = advice(problem)
        if todo:
            lines.append(f"    what to do: {todo}")
    return lines


def status_lines(job: dict[str, Any]) -> list[str]:
    """A described job (kube/info.py): the headline, Kueue's admission, the pods, the
    problems, the newest events and the log tail."""
    lines = [headline(job)]
    if job.get("reason") or job.get("message"):
        lines.append(f"  {': '.join(filter(None, [job.get('reason'), job.get('message')]))}")
    queue = job.get("queue")
    if queue:
        where = f" by ClusterQueue {queue['cluster_queue']}" if queue.get("cluster_queue") else ""
        ran = f", on worker {queue['worker']}" if queue.get("worker") else ""
        lines.append(f"  Kueue: {queue.get('state')}{where}{ran}")
    for pod in job.get("pods") or []:
        where = f" on {pod['node']}" if pod.get("node") else ""
        restarts = f", {pod['restarts']} restarts" if pod.get("restarts") else ""
        codes = f", exit codes {pod['exit_codes']}" if pod.get("exit_codes") else ""
        lines.append(f"  pod {pod['name']}: {pod.get('phase')}{where}{restarts}{codes}")
    if job.get("problems"):
        lines.append("  problems:")
        lines.extend("  " + line for line in problem_lines(job["problems"]))
    if job.get("events"):
        lines.append("  events:")
        lines.extend(
            f"    {e.get('type')} {e.get('reason')}: {e.get('message')}" for e in job["events"]
        )
    log = job.get("log")
    if log and log.get("pod"):
        lines.append(f"  log of {log['pod']}:")
        lines.extend(f"    {line}" for line in log.get("lines") or [])
    return lines
