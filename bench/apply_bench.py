"""Apply benchmark: tfjob.kit.tfjob against kubectl and kubernetes.core.k8s, in the same run.

Writes N realistic TFJobs (bench/corpus.py, one file each, suspended so that the operator creates
no pods and the cluster's work stays the apply itself), then times, on the same local cluster and
each in a fresh namespace:

* tfjob.kit.tfjob: one ansible-playbook task with src: DIR (validates every job with the schema
  and all rules, dry-runs all of them server-side and, beside that, runs its preflight as by
  default: one pod per replica type and the PodGroup of each job dry-run, the claims and Secret
  the jobs name looked up, the quotas read; then applies);
* kubectl apply --server-side -f DIR (kubectl built from versions.toml; warm discovery cache);
* kubernetes.core.k8s with server_side_apply, in a loop over the files (one task, N items):
  the usual way to apply a directory with the kubernetes.core collection;

and then the same again on the populated namespace (nothing changes: the idempotent re-run of a
pipeline). Each namespace first gets what the jobs name (the PVCs imagenet and tf-checkpoints,
the Secret wandb), as a team's namespace has them; otherwise the preflight rightly refuses.
Prints best-of-3 wall times and ratios to kubectl; the target is tfjob.kit.tfjob (preflight on)
within 1.5x of kubectl.
Not a test: `make bench-apply` or
`python bench/apply_bench.py [--jobs N] [--skip-k8s] [--cluster NAME]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import tfjob
from tfjob_kit.cluster import local
from tfjob_kit.cluster.build import kubectl_path
from tfjob_kit.cluster.options import default_name

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
NEEDS: list[dict[str, Any]] = [
    *(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim},
            "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "10Gi"}}},
        }
        for claim, mode in (("imagenet", "ReadOnlyMany"), ("tf-checkpoints", "ReadWriteMany"))
    ),
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "wandb"},
        "stringData": {"api-key": "bench"},
    },
]


def write_jobs(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        job = tfjob(index)
        job["metadata"].pop("namespace", None)
        job["spec"].setdefault("runPolicy", {})["suspend"] = True
        (directory / f"job-{index:04d}.yaml").write_text(yaml.safe_dump(job, sort_keys=False))


class Bench:
    def __init__(self, kubeconfig: Path, work: Path) -> None:
        self.kubeconfig = kubeconfig
        self.work = work
        self.env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
            K8S_AUTH_KUBECONFIG=str(kubeconfig),
            KUBECONFIG=str(kubeconfig),
            ANSIBLE_NOCOLOR="1",
            PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
        )
        self.cache = ["--cache-dir", str(work / "kubectl-cache")]

    def kubectl(self, *args: str) -> str:
        proc = subprocess.run(
            [kubectl_path(), "--kubeconfig", str(self.kubeconfig), *self.cache, *args],
            capture_output=True,
            text=True,
            check=False,
            env=self.env,
        )
        if proc.returncode != 0:
            raise SystemExit(f"kubectl {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
        return proc.stdout

    def prepare(self, namespace: str) -> None:
        """The namespace, with the claims and the Secret the corpus's jobs name."""
        self.kubectl("create", "namespace", namespace)
        path = self.work / "needs.yaml"
        path.write_text(yaml.safe_dump_all(NEEDS))
        self.kubectl("apply", "-n", namespace, "-f", str(path))

    def count(self, namespace: str) -> int:
        data = json.loads(self.kubectl("get", "tfjobs", "-n", namespace, "-o", "json"))
        return len(data["items"])

    def playbook(self, name: str, task: dict[str, Any]) -> list[str]:
        path = self.work / f"{name}.yml"
        path.write_text(
            yaml.safe_dump(
                [{"name": name, "hosts": "localhost", "gather_facts": False, "tasks": [task]}]
            )
        )
        return [str(BIN / "ansible-playbook"), str(path)]

    def timed(self, command: list[str]) -> float:
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, env=self.env, check=False)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
        return seconds


def contenders(bench: Bench, jobs: Path, skip_k8s: bool, preflight_off: bool) -> dict[str, Any]:
    def module(namespace: str, preflight: bool = True) -> list[str]:
        options: dict[str, Any] = {"src": str(jobs), "namespace": namespace}
        if not preflight:
            options["preflight"] = False
        return bench.playbook(f"module-{namespace}", {"name": "apply", "tfjob.kit.tfjob": options})

    def module_off(namespace: str) -> list[str]:
        return module(namespace, preflight=False)

    def kubectl(namespace: str) -> list[str]:
        return [
            kubectl_path(),
            "--kubeconfig",
            str(bench.kubeconfig),
            *bench.cache,
            "apply",
            "--server-side",
            "-n",
            namespace,
            "-f",
            str(jobs),
        ]

    def k8s_loop(namespace: str) -> list[str]:
        return bench.playbook(
            f"k8s-{namespace}",
            {
                "name": "apply",
                "kubernetes.core.k8s": {
                    "src": "{{ item }}",
                    "namespace": namespace,
                    "state": "present",
                    "server_side_apply": {"field_manager": "bench"},
                },
                "loop": sorted(str(p) for p in jobs.glob("*.yaml")),
            },
        )

    chosen = {"tfjob.kit.tfjob": module, "kubectl apply --server-side": kubectl}
    if preflight_off:
        chosen["tfjob.kit.tfjob, no preflight"] = module_off
    if not skip_k8s:
        chosen["kubernetes.core.k8s loop"] = k8s_loop
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per tool, best kept (the k8s loop runs once)"
    )
    parser.add_argument(
        "--skip-k8s", action="store_true", help="leave out the (slow) kubernetes.core.k8s loop"
    )
    parser.add_argument(
        "--preflight-off",
        action="store_true",
        help="also time tfjob.kit.tfjob with preflight: false (what the preflight costs)",
    )
    parser.add_argument(
        "--cluster",
        default=default_name(),
        help="the local cluster to use (started unless running; default: $TFJOB_KIT_CLUSTER, "
        "else tfjob-kit)",
    )
    args = parser.parse_args()
    kubeconfig = local.up(local.UpOptions(name=args.cluster), out=sys.stderr)
    run_id = uuid.uuid4().hex[:6]
    work = RESULTS / f"apply-{run_id}"
    jobs = work / "jobs"
    write_jobs(jobs, args.jobs)
    bench = Bench(kubeconfig, work)
    bench.kubectl("version")  # warm kubectl's discovery cache
    rows: list[dict[str, Any]] = []
    for name, command in contenders(bench, jobs, args.skip_k8s, args.preflight_off).items():
        repeat = 1 if "k8s" in name else args.repeat
        first, again = [], []
        for attempt in range(repeat):
            namespace = f"bench-{run_id}-{len(rows)}-{attempt}"
            bench.prepare(namespace)
            try:
                first.append(bench.timed(command(namespace)))
                created = bench.count(namespace)
                again.append(bench.timed(command(namespace)))
            finally:
                # Wait: a namespace being emptied in the background would slow the next run.
                bench.kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=300s")
            if created != args.jobs:
                raise SystemExit(f"{name} created {created} of {args.jobs} TFJobs")
        rows.append(
            {"tool": name, "create_s": round(min(first), 2), "reapply_s": round(min(again), 2)}
        )
        print(
            f"{name}: create {min(first):.2f}s, re-apply {min(again):.2f}s (best of {repeat})",
            file=sys.stderr,
        )
    base = rows[1]
    for row in rows:
        row["create_vs_kubectl"] = round(row["create_s"] / base["create_s"], 2)
        row["reapply_vs_kubectl"] = round(row["reapply_s"] / base["reapply_s"], 2)
    print(f"\n{args.jobs} TFJobs, one file each, local cluster ({os.cpu_count()} CPUs)\n")
    print(f"{'tool':<30} {'create s':>9} {'vs kubectl':>11} {'re-apply s':>11} {'vs kubectl':>11}")
    for row in rows:
        print(
            f"{row['tool']:<30} {row['create_s']:>9.2f} {row['create_vs_kubectl']:>10.2f}x "
            f"{row['reapply_s']:>11.2f} {row['reapply_vs_kubectl']:>10.2f}x"
        )
    (RESULTS / "apply.json").write_text(json.dumps({"jobs": args.jobs, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
