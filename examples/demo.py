"""The main job (`make demo`): the whole product on the embedded local cluster.

1. build (or reuse) the local cluster's binaries, with their progress;
2. bring the cluster up and bootstrap it: `ansible-playbook -i inventories/local
   playbooks/site.yml -e tfjob_kit_trainer=true` (gang scheduler, TFJob CRD and operator,
   JobSet and Kubeflow Trainer v2, device plugin, smoke job);
3. submit the seeds' jobs with tfjob.kit.tfjob (examples/playbooks/demo.yml) and wait for each:
   the PS/Worker dist-mnist TFJob, a GPU Chief job, the v1beta1 MASTER job and the T9k
   TensorFlowTrainingJob (both converted), and dist-mnist again as a Volcano Job and as a
   TrainJob; print a summary and the TF_CONFIG worker 0 received, as a TFJob and as a TrainJob;
4. seed 003's story, measured (examples/gang_story.py): two jobs that together need more GPUs
   than exist, without and with gang scheduling.

Everything is reused on a second run (cached binaries, running cluster, installed charts); the
jobs run again. Exits non-zero as soon as a step does not behave as it must.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import gang_story

from tfjob_kit import extras, model, trainjob
from tfjob_kit.cluster import local
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.paths import cluster_dir
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TFJOB, TRAINJOB
from tfjob_kit.report import timeline

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
NAMESPACE = "tfjob-kit-demo"  # examples/playbooks/demo.yml
TF_CONFIG_OF = "dist-mnist-worker-0"
TRAINJOB_NAME = "dist-mnist-trainjob"  # examples/playbooks/demo.yml
TRAINJOB_TF_CONFIG_OF = f"{TRAINJOB_NAME}-node-0-0"  # its worker 0's hostname
BACKENDS = {"TFJob": "kubeflow", "Job": "volcano", "TrainJob": "trainer"}
SUCCEEDED = ("Succeeded", "Completed", "Complete")


class DemoError(Exception):
    pass


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [headers, ["-" * w for w in widths], *rows]
    ]
    return "\n".join(lines)


def section(title: str) -> None:
    print(f"\n=== {title}", flush=True)


def run(command: list[str]) -> None:
    """Run a step with its output shown as it comes; fail the demo when it fails."""
    print(
        f"$ {' '.join(Path(command[0]).name if i == 0 else c for i, c in enumerate(command))}",
        flush=True,
    )
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    rc = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    if rc != 0:
        raise DemoError(f"`{Path(command[0]).name} {' '.join(command[1:])}` exited {rc}")


def _time(stamp: str | None) -> datetime | None:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None


def _replicas(obj: dict[str, Any], objects: list[dict[str, Any]]) -> str:
    if obj.get("kind") == "TFJob":
        groups = {r.key: r.count for r in model.replicas(obj)}
    elif obj.get("kind") == "TrainJob":  # its pods on its runtime, by replicated job
        runtime = trainjob.find_runtime(obj, objects) or {}
        groups = {}
        for pod in trainjob.pods(obj, runtime):
            groups[pod.replicated_job] = groups.get(pod.replicated_job, 0) + 1
    else:
        groups = {t.get("name", "?"): t.get("replicas", 1) for t in obj["spec"].get("tasks", [])}
    return " ".join(f"{k}:{v}" for k, v in groups.items())


def summary(report: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for item in report:
        job = item["jobs"][0]
        obj = next(o for o in item["objects"] if o.get("kind") == job["kind"])
        created = _time(obj["metadata"].get("creationTimestamp"))
        done = _time(job.get("completion_time"))
        took = f"{(done - created).total_seconds():.0f}s" if created and done else "-"
        rows.append(
            [
                item["item"]["label"],
                f"{job['kind']} {job['name']}",
                BACKENDS[job["kind"]],
                _replicas(obj, item["objects"]),
                job["phase"],
                took,
            ]
        )
    return rows


def received_tf_config(kubeconfig: Path) -> tuple[str, str]:
    """TF_CONFIG as worker 0 got it: from the operator (the TFJob's pod), and from its pod spec
    as the kubelet resolves it (the TrainJob's pod; read back from the cluster)."""
    found: dict[str, str] = {}
    with Client(Connection(kubeconfig=str(kubeconfig))) as client:
        pods = [
            *client.pods(NAMESPACE, TFJOB.selector("dist-mnist")),
            *client.pods(NAMESPACE, TRAINJOB.selector(TRAINJOB_NAME)),
        ]
        for pod in pods:
            name = pod["spec"].get("hostname") or pod["metadata"]["name"]
            if name not in (TF_CONFIG_OF, TRAINJOB_TF_CONFIG_OF):
                continue
            for container in pod["spec"]["containers"]:
                env = trainjob.resolve_env(container.get("env") or [], pod["metadata"])
                if "TF_CONFIG" in env:
                    found[name] = env["TF_CONFIG"]
    missing = [n for n in (TF_CONFIG_OF, TRAINJOB_TF_CONFIG_OF) if n not in found]
    if missing:
        raise DemoError(f"no TF_CONFIG in the pods of {', '.join(missing)}")
    return found[TF_CONFIG_OF], found[TRAINJOB_TF_CONFIG_OF]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cluster",
        default=local.default_name(),
        help="the local cluster to use or start (default: $TFJOB_KIT_CLUSTER, else %(default)s)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    extra = ["-e", f"local_cluster_name={args.cluster}"]
    try:
        section("1/4 The local cluster's binaries: built from Go modules once, then cached")
        run([str(BIN / "tfjob-kit"), "cluster", "build"])

        section("2/4 Bring the local cluster up and bootstrap it (playbooks/site.yml)")
        run(
            [
                str(BIN / "ansible-playbook"),
                *("-i", "inventories/local", "playbooks/site.yml", *extra),
                *("-e", "tfjob_kit_trainer=true"),
            ]
        )

        section("3/4 The seeds' jobs through tfjob.kit.tfjob (examples/playbooks/demo.yml)")
        with tempfile.TemporaryDirectory(prefix="tfjob-kit-demo-") as tmp:
            report_path = Path(tmp) / "report.json"
            run(
                [
                    str(BIN / "ansible-playbook"),
                    "-i",
                    "inventories/local",
                    "examples/playbooks/demo.yml",
                    *extra,
                    "-e",
                    f"demo_report={report_path}",
                ]
            )
            report = json.loads(report_path.read_text("utf-8"))
        rows = summary(report)
        print("\n" + table(["job", "object", "backend", "replicas", "result", "duration"], rows))
        if any(r[4] not in SUCCEEDED for r in rows):
            raise DemoError("a job did not succeed")
        kubeconfig = local.kubeconfig_path(args.cluster)
        tfjob_config, trainjob_config = received_tf_config(kubeconfig)
        print(f"\nTF_CONFIG that {TF_CONFIG_OF} received:\n{tfjob_config}")
        print(f"\nTF_CONFIG that {TRAINJOB_TF_CONFIG_OF} received:\n{trainjob_config}")

        section(
            "4/4 Seed 003: two jobs that together need more GPUs than exist "
            "(12 of 8), without gang scheduling, with Volcano and with Kueue"
        )
        print(
            "Each job: 1 parameter server and 3 workers with 2 GPUs; the cluster has 2 GPU "
            "nodes with 4 GPUs. A TensorFlow task waits for every peer in its TF_CONFIG.",
            flush=True,
        )
        runs = gang_story.story(args.cluster, out=sys.stdout)
        for scheduler, timelines in runs.items():
            print(f"\n{gang_story.SCHEDULERS[scheduler]}:")
            print(table(gang_story.HEADERS, gang_story.rows(timelines)))
            for t in timelines.values():
                if t.partly_placed_s >= 1.0:
                    print(f"  {t.name}: {t.worst}")
        problems = gang_story.verdict(runs)
        if problems:
            raise DemoError("seed 003's story did not happen as expected: " + "; ".join(problems))
        plain = max(runs["none"].values(), key=lambda t: t.partly_placed_s)
        gpus = gang_story.cluster_gpus(Kubectl(kubeconfig))
        stalled = [t.name for t in runs["none"].values() if t.finished is None]
        print(
            f"\nWithout gang scheduling {plain.name} sat partly placed for "
            f"{plain.partly_placed_s:.0f}s, its placed pods holding GPUs while waiting for "
            "peers"
            + (
                f"; {' and '.join(stalled)} never finished (removed)."
                if stalled
                else " (had both jobs been partly placed, neither would ever finish)."
            )
            + " With Volcano no job was partly placed: they ran one after the other."
            + f" With Kueue (a ClusterQueue of {gpus} GPUs, the cluster's, and waitForPodsReady "
            "with the kueue chart's 5-minute timeout) the second job waited suspended, no pod "
            "made, until the quota had room for all of it."
        )
        picture(args.cluster, runs)
    except DemoError as exc:
        print(f"\ndemo FAILED: {exc}", file=sys.stderr)
        return 1
    named = "" if args.cluster == local.default_name() else f" --name {args.cluster}"
    print(
        f"\ndemo: done in {time.monotonic() - started:.0f}s. The cluster keeps running: "
        f'eval "$(tfjob-kit cluster env{named})" to use it, '
        f"tfjob-kit cluster down{named} to remove it."
    )
    return 0


def picture(cluster: str, runs: dict[str, dict[str, gang_story.JobTimeline]]) -> None:
    """The story as a timeline picture, in the cluster's folder (with the plot extra)."""
    if extras.missing("plot"):
        print("\n(pip install 'tfjob-kit[plot]' and the story is also drawn as a picture)")
        return
    path = timeline.draw(
        gang_story.panels(runs),
        cluster_dir(cluster) / "gang-story.png",
        "Seed 003: two jobs of 6 GPUs on 8 GPUs",
    )
    print(f"\nThe story as a picture (GPUs in use and held idle over time): {path}")


if __name__ == "__main__":
    sys.exit(main())
