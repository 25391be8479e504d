"""Scale benchmark: a thousand simulated GPU nodes, two workloads, the toolkit and kubectl side by
side in the same run, on the same local cluster.

* ``gang``: 500 TFJobs of 1 PS and 3 workers with 2 GPUs each, gang-scheduled by Volcano (the
  operator makes each job a PodGroup);
* ``wide``: one TFJob with 1,000 workers of 1 GPU each (also one gang).

Each workload runs twice, each time in a fresh namespace and to Succeeded:

* the toolkit: ``playbooks/submit.yml`` (``tfjob.kit.tfjob``: validation, the preflight,
  server-side dry runs, apply, then the wait on watches);
* kubectl: ``kubectl apply --server-side -f DIR`` then ``kubectl wait --for=condition=Succeeded``.

For each it reports the wall time; the pods and how fast they were scheduled (pods over the time
from the start to the last pod's PodScheduled); the time to the first and to the last Succeeded
job; the tool's own API requests (the toolkit's counted in each Python process it starts, see
``bench/count_requests``; kubectl's from its ``-v=6`` request log), CPU time and peak RSS (of
the tool's process tree: ``wait4``, and VmHWM sampled). The toolkit's overhead is (toolkit wall
- kubectl wall) / kubectl wall. The cluster's own work (the operator creating pods and
Services, Volcano scheduling them) is the same for both; ``up`` time and the cluster's memory are
printed too.

Not a test: ``make bench-scale`` or ``python bench/scale_bench.py [--gpu-nodes N] [--jobs N]
[--workers N] [--only gang|wide] [--cluster NAME] [--up-arg=--FLAG=VALUE ...]``. The cluster is
created unless it runs (``--up-arg`` passes options to ``tfjob-kit cluster up``) and left
running with ``--keep``. Results: ``bench/results/scale.json``.

``--tuning`` measures the cluster instead of the tools: kubectl drives a smaller gang workload
(``--tuning-jobs``, 100) and the wide job under each of ``TUNINGS`` (the operator's controller
threads, API QPS and burst, Volcano's schedule period; the first are the components' defaults),
restarting the operator and vc-scheduler between them (``bench/results/scale-tuning.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit import extras
from tfjob_kit.cluster import local
from tfjob_kit.cluster.build import kubectl_path
from tfjob_kit.cluster.options import UpOptions
from tfjob_kit.kube.kinds import TFJOB
from tfjob_kit.report import timeline
from tfjob_kit.timestamps import seconds

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
IMAGE = "registry.example.com/ml/resnet:2.15.0"
# kubectl -v=6 logs one line per request: "... GET https://host/path 200 OK in 3 milliseconds".
KUBECTL_REQUEST = re.compile(r"\] (GET|POST|PUT|PATCH|DELETE) https?://")


@dataclass
class Run:
    """One tool's run of one workload."""

    workload: str
    tool: str
    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    requests: int
    pods: int
    pods_per_s: float
    first_succeeded_s: float
    last_succeeded_s: float
    jobs: int


def _container(gpus: int, cpu: str) -> dict[str, Any]:
    limits: dict[str, Any] = {"cpu": cpu, "memory": "4Gi"}
    if gpus:
        limits["nvidia.com/gpu"] = gpus
    return {
        "name": "tensorflow",
        "image": IMAGE,
        "command": ["python", "/opt/train.py"],
        "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": limits},
    }


def _replica(count: int, gpus: int, cpu: str = "2") -> dict[str, Any]:
    return {
        "replicas": count,
        "restartPolicy": "Never",
        "template": {"spec": {"containers": [_container(gpus, cpu)]}},
    }


def gang_jobs(count: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": f"gang-{index:04d}"},
            "spec": {
                "runPolicy": {"cleanPodPolicy": "None"},
                "tfReplicaSpecs": {"PS": _replica(1, 0, "1"), "Worker": _replica(3, 2)},
            },
        }
        for index in range(count)
    ]


def wide_job(workers: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "wide"},
            "spec": {
                "runPolicy": {"cleanPodPolicy": "None"},
                "tfReplicaSpecs": {"Worker": _replica(workers, 1)},
            },
        }
    ]


def _true_since(objects: list[dict[str, Any]], condition: str) -> list[float]:
    """When each object's ``condition`` became True (objects without it are left out)."""
    return [
        stamp
        for o in objects
        for c in o.get("status", {}).get("conditions", [])
        if c.get("type") == condition and c.get("status") == "True"
        if (stamp := seconds(c.get("lastTransitionTime"))) is not None
    ]


def _tree_peak_kib(root: int) -> int:
    """The largest peak RSS (VmHWM) among ``root`` and its descendants now."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    peak = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            continue
    return peak


def measured(command: list[str], env: dict[str, str], log: Path) -> tuple[float, float, float]:
    """Run ``command`` (output to ``log``); (wall s, CPU s, peak RSS MiB) of its process tree.

    The CPU time is the tree's (``wait4``). The peak RSS is sampled, every 0.2 s, as the largest
    VmHWM of a process of the tree: ``wait4``'s maxrss would report this benchmark's own size,
    which a child carries across fork and exec. A failure ends the benchmark with the
    command's output."""
    start = time.perf_counter()
    peak = 0
    with log.open("ab") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _tree_peak_kib(proc.pid))
            time.sleep(0.2)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise SystemExit(f"{' '.join(command[:3])} ... failed ({proc.returncode}):\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime, peak / 1024


class Bench:
    def __init__(self, kubeconfig: Path, work: Path) -> None:
        self.kubeconfig = kubeconfig
        self.work = work
        # Each workload's runs, all their jobs in one lane each: the timeline picture.
        self.lanes: dict[str, list[timeline.Lane]] = {}
        self.kubectl_base = [
            kubectl_path(),
            "--kubeconfig",
            str(kubeconfig),
            "--cache-dir",
            str(work / "kubectl-cache"),
        ]
        self.env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
            ANSIBLE_NOCOLOR="1",
            PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
        )

    def kubectl(self, *args: str, timeout: float = 1800) -> str:
        proc = subprocess.run(
            [*self.kubectl_base, *args],
            capture_output=True,
            text=True,
            check=False,
            env=self.env,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise SystemExit(f"kubectl {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
        return proc.stdout

    def toolkit(self, jobs: Path, namespace: str, log: Path) -> tuple[float, float, float, int]:
        counts = self.work / f"requests-{namespace}.jsonl"
        env = dict(
            self.env,
            # No empty entry: it would put the working directory on every process's path.
            PYTHONPATH=os.pathsep.join(
                filter(None, [str(ROOT / "bench" / "count_requests"), self.env.get("PYTHONPATH")])
            ),
            TFJOB_KIT_BENCH_REQUESTS=str(counts),
        )
        command = [
            str(BIN / "ansible-playbook"),
            "-i",
            str(ROOT / "inventories" / "example"),
            str(ROOT / "playbooks" / "submit.yml"),
            "-e",
            json.dumps(
                {
                    "tfjob_kit_kubeconfig": str(self.kubeconfig),
                    "tfjob_kit_context": "",
                    "tfjob_kit_jobs_dir": str(jobs),
                    "tfjob_kit_namespace": namespace,
                    "tfjob_kit_wait_timeout": 3600,
                }
            ),
        ]
        wall, cpu, rss = measured(command, env, log)
        requests = 0
        if counts.exists():
            for line in counts.read_text().splitlines():
                requests += sum(v for k, v in json.loads(line).items() if k != "pid")
        return wall, cpu, rss, requests

    def kubectl_run(self, jobs: Path, namespace: str, log: Path) -> tuple[float, float, float, int]:
        wall = cpu = rss = 0.0
        for args in (
            ["apply", "--server-side", "-n", namespace, "-f", str(jobs)],
            ["wait", "--for=condition=Succeeded", "tfjobs", "--all", "-n", namespace],
        ):
            command = [*self.kubectl_base, "-v=6", *args, "--timeout=3600s"]
            if args[0] == "apply":
                command.remove("--timeout=3600s")
            w, c, r = measured(command, self.env, log)
            wall, cpu, rss = wall + w, cpu + c, max(rss, r)
        requests = sum(1 for line in log.read_text().splitlines() if KUBECTL_REQUEST.search(line))
        return wall, cpu, rss, requests

    def observed(
        self, workload: str, tool: str, namespace: str, started: float, result: tuple[Any, ...]
    ) -> Run:
        """What the cluster shows of the run: its pods' scheduling, its jobs' success."""
        wall, cpu, rss, requests = result
        pods = json.loads(self.kubectl("get", "pods", "-n", namespace, "-o", "json"))["items"]
        scheduled = _true_since(pods, "PodScheduled")
        tfjobs = json.loads(self.kubectl("get", "tfjobs", "-n", namespace, "-o", "json"))["items"]
        succeeded = _true_since(tfjobs, "Succeeded")
        if len(succeeded) != len(tfjobs) or len(scheduled) != len(pods):
            raise SystemExit(
                f"{tool}: {len(succeeded)} of {len(tfjobs)} jobs Succeeded, "
                f"{len(scheduled)} of {len(pods)} pods scheduled"
            )
        self.lanes.setdefault(workload, []).append(
            timeline.occupancy(
                tool, pods, lambda pod: pod["metadata"]["labels"][TFJOB.job_label], started
            )
        )
        # Timestamps have whole seconds: the spans are as exact as that.
        span = max(max(scheduled) - started, 1.0)
        return Run(
            workload=workload,
            tool=tool,
            wall_s=round(wall, 1),
            cpu_s=round(cpu, 1),
            peak_rss_mib=round(rss, 1),
            requests=requests,
            pods=len(pods),
            pods_per_s=round(len(pods) / span, 1),
            first_succeeded_s=round(min(succeeded) - started, 1),
            last_succeeded_s=round(max(succeeded) - started, 1),
            jobs=len(tfjobs),
        )

    def workload(self, name: str, docs: list[dict[str, Any]], toolkit: bool = True) -> list[Run]:
        jobs = self.work / f"{name}.yaml"
        jobs.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        runs = []
        tools = [("tfjob-kit (submit.yml)", self.toolkit)] if toolkit else []
        for tool, run in [*tools, ("kubectl", self.kubectl_run)]:
            namespace = f"scale-{name}-{uuid.uuid4().hex[:6]}"
            self.kubectl("create", "namespace", namespace)
            log = self.work / f"{namespace}.log"
            print(f"[bench] {name}: {tool} in {namespace} (log {log})", file=sys.stderr)
            try:
                started = time.time()
                result = run(jobs, namespace, log)
                runs.append(self.observed(name, tool, namespace, started, result))
                print(f"[bench]   {asdict(runs[-1])}", file=sys.stderr)
            finally:
                # Not timed; the next run starts on a cluster without this one's objects.
                self.kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=1800s")
        return runs


def _up(args: argparse.Namespace) -> list[str]:
    """``tfjob-kit cluster up`` of the benchmark's cluster; options follow."""
    return [str(BIN / "tfjob-kit"), "cluster", "up", "--name", args.cluster]


def bring_up(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The cluster, started unless it runs: how long ``up`` took and what the cluster holds."""
    info: dict[str, Any] = {"cluster": args.cluster, "reused": local.is_running(args.cluster)}
    if not info["reused"]:
        command = [
            *_up(args),
            "--cpu-nodes",
            "2",
            "--gpu-nodes",
            str(args.gpu_nodes),
            "--gpus-per-node",
            "8",
            "--timeout",
            "900",
            *args.up_arg,
        ]
        with tempfile.TemporaryDirectory() as temp:
            wall, cpu, rss = measured(command, dict(os.environ), Path(temp) / "up.log")
        info.update(up_wall_s=round(wall, 1), up_cpu_s=round(cpu, 1), up_rss_mib=round(rss, 1))
    status = local.status(args.cluster)
    info["cluster_rss_mib"] = status.get("rss_mib_total")
    info["nodes"] = len(status.get("nodes", []))
    info["gpus"] = sum(int(n["gpus"]) for n in status.get("nodes", []))
    return local.kubeconfig_path(args.cluster), info


# What --tuning compares: the operator's controller threads, API QPS and burst, and Volcano's
# schedule period; the first are the components' own defaults.
TUNINGS = [
    ("threads 1, qps 20, burst 30, period 1s", ["1", "20", "30", "1s"]),
    ("threads 1, qps 100, burst 200, period 1s", ["1", "100", "200", "1s"]),
    ("threads 4, qps 100, burst 200, period 1s", ["4", "100", "200", "1s"]),
    ("threads 4, qps 100, burst 200, period 200ms", ["4", "100", "200", "200ms"]),
]


def _tune(args: argparse.Namespace, bench: Bench, values: list[str]) -> None:
    """``cluster up`` on the running cluster with these threads, QPS, burst and period (it
    restarts the operator and vc-scheduler to match)."""
    threads, qps, burst, period = values
    command = [
        *_up(args),
        f"--operator-threads={threads}",
        f"--operator-qps={qps}",
        f"--operator-burst={burst}",
        f"--schedule-period={period}",
    ]
    subprocess.run(command, check=True, capture_output=True, env=bench.env)


def tuning(args: argparse.Namespace, bench: Bench) -> list[Run]:
    """The cluster's own pace (kubectl drives) under each of TUNINGS: the operator and
    vc-scheduler are restarted with them by ``cluster up`` on the running cluster, and with
    the local cluster's defaults at the end."""
    runs = []
    try:
        for label, values in TUNINGS:
            _tune(args, bench, values)
            for run in [
                *bench.workload("gang", gang_jobs(args.tuning_jobs), toolkit=False),
                *bench.workload("wide", wide_job(args.workers), toolkit=False),
            ]:
                run.tool = label
                runs.append(run)
    finally:
        defaults = UpOptions()
        _tune(
            args,
            bench,
            [
                str(defaults.operator_threads),
                str(defaults.operator_qps),
                str(defaults.operator_burst),
                defaults.schedule_period,
            ],
        )
    return runs


def table(runs: list[Run], overhead: bool = True) -> str:
    width = max(len(r.tool) for r in runs)
    head = (
        f"{'workload':<8} {'tool':<{width}} {'wall s':>8} {'pods':>6} {'pods/s':>7} "
        f"{'first ok s':>10} {'last ok s':>10} {'requests':>9} {'CPU s':>7} {'RSS MiB':>8}"
    )
    lines = [head]
    for r in runs:
        lines.append(
            f"{r.workload:<8} {r.tool:<{width}} {r.wall_s:>8.1f} {r.pods:>6} {r.pods_per_s:>7.1f} "
            f"{r.first_succeeded_s:>10.1f} {r.last_succeeded_s:>10.1f} {r.requests:>9} "
            f"{r.cpu_s:>7.1f} {r.peak_rss_mib:>8.1f}"
        )
    for workload in dict.fromkeys(r.workload for r in runs) if overhead else ():
        toolkit, kubectl = (r for r in runs if r.workload == workload)
        extra = (toolkit.wall_s - kubectl.wall_s) / kubectl.wall_s
        lines.append(f"{workload}: toolkit overhead vs kubectl {extra:+.1%} of wall time")
    return "\n".join(lines)


WORKLOADS = {
    "gang": "{jobs} TFJobs of 1 PS and 3 workers with 2 GPUs each",
    "wide": "one TFJob of {workers} workers with 1 GPU each",
}


def picture(args: argparse.Namespace, info: dict[str, Any], bench: Bench) -> Path | None:
    """The runs as a timeline (the ``plot`` extra): a panel per workload, a lane per tool with
    all its jobs together; None without matplotlib."""
    if extras.missing("plot"):
        print("(pip install 'tfjob-kit[plot]' and the runs are also drawn as a picture)")
        return None
    return timeline.draw(
        [
            timeline.Panel(WORKLOADS[name].format_map(vars(args)), lanes)
            for name, lanes in bench.lanes.items()
        ],
        RESULTS / "scale.png",
        f"make bench-scale: Volcano on {info['nodes']} nodes, {info['gpus']} GPUs; "
        "each tool's jobs together",
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cluster", default="tfjob-kit-scale")
    parser.add_argument("--gpu-nodes", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=500, help="TFJobs of the gang workload")
    parser.add_argument("--workers", type=int, default=1000, help="workers of the wide TFJob")
    parser.add_argument("--only", choices=["gang", "wide"])
    parser.add_argument("--up-arg", action="append", default=[], help="passed to cluster up")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument(
        "--tuning",
        action="store_true",
        help="instead: the cluster's pace under each operator/Volcano tuning (kubectl drives)",
    )
    parser.add_argument("--tuning-jobs", type=int, default=100, help="gang TFJobs per tuning")
    args = parser.parse_args()
    started_here = not local.is_running(args.cluster)
    runs: list[Run] = []
    bench: Bench | None = None
    try:
        kubeconfig, info = bring_up(args)
        print(f"[bench] cluster: {info}", file=sys.stderr)
        work = RESULTS / f"scale-{uuid.uuid4().hex[:6]}"
        work.mkdir(parents=True)
        bench = Bench(kubeconfig, work)
        bench.kubectl("version")  # kubectl's discovery cache, warm for both
        if args.tuning:
            runs = tuning(args, bench)
        if args.only in (None, "gang") and not args.tuning:
            runs += bench.workload("gang", gang_jobs(args.jobs))
        if args.only in (None, "wide") and not args.tuning:
            runs += bench.workload("wide", wide_job(args.workers))
    finally:
        if started_here and not args.keep:
            local.down(args.cluster, out=sys.stderr)
    text = table(runs, overhead=not args.tuning)
    print(f"\n{info}\n\n{text}")
    drawn = picture(args, info, bench) if bench and bench.lanes and not args.tuning else None
    if drawn:
        print(f"\nThe runs as a picture (GPUs in use and held idle over time): {drawn}")
    (RESULTS / ("scale-tuning.json" if args.tuning else "scale.json")).write_text(
        json.dumps({"cluster": info, "runs": [asdict(r) for r in runs]}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
