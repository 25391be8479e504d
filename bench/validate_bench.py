"""Validation benchmark: tfjob-kit against kubeconform and check-jsonschema, in the same run.

Generates N realistic TFJobs (bench/corpus.py), then times whole processes validating them:

* tfjob-kit validate: JSON Schema (with the Kubernetes PodTemplateSpec) + every semantic rule,
  one process (-j 1) and one per CPU (-j 0);
* kubeconform (built with `go install`, version from versions.toml) fed the JSON schema of the
  CRD that tfjob-kit generates (schema only, no rules), with one worker (-n 1; its Go runtime
  still collects garbage on other cores);
* check-jsonschema fed tfjob-kit's bundled JSON schema (one document per file: it reads one;
  1,000 documents by default, as it manages ~30 per second).

Prints the best-of-R wall time, throughput, the ratio to kubeconform, each process's CPU time
(user + system, of the same run: on a busy machine it is steadier than wall time) and peak RSS.
Not a test: `make bench` or `python bench/validate_bench.py [--docs N] [--repeat R]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import tfjob, write_corpus

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent


@dataclass
class Run:
    name: str
    docs: int
    seconds: float
    cpu_seconds: float
    peak_rss_mib: float
    output: str


def timed(
    name: str, command: list[str], docs: int, repeat: int, ok_codes: tuple[int, ...] = (0,)
) -> Run:
    best: Run | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        output = process.stdout.read() if process.stdout else ""
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in ok_codes:
            raise SystemExit(f"{name} exited {code}:\n{output[-2000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        run = Run(name, docs, seconds, cpu, usage.ru_maxrss / 1024, output)
        if best is None or run.seconds < best.seconds:
            best = run
    assert best is not None
    return best


def kubeconform_binary() -> Path:
    with (ROOT / "versions.toml").open("rb") as handle:
        version = tomllib.load(handle)["kubeconform"]["version"]
    cache = Path(os.environ.get("TFJOB_KIT_CACHE", Path.home() / ".cache" / "tfjob-kit"))
    target = cache / "bin" / f"kubeconform-{version}"
    binary = target / "kubeconform"
    if not binary.exists():
        print(f"building kubeconform {version} with go install ...", flush=True)
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["go", "install", f"github.com/yannh/kubeconform/cmd/kubeconform@{version}"],
            env={**os.environ, "GOBIN": str(target)},
            check=True,
        )
    return binary


def prepare(docs: int) -> tuple[Path, Path, Path]:
    corpus = RESULTS / f"corpus-{docs}"
    single = RESULTS / f"corpus-{docs}-single"
    if not (corpus / ".done").exists():
        print(f"generating {docs} TFJobs ...", flush=True)
        shutil.rmtree(corpus, ignore_errors=True)
        write_corpus(corpus, docs)
        (corpus / ".done").touch()
    if not (single / ".done").exists():
        shutil.rmtree(single, ignore_errors=True)
        single.mkdir(parents=True)
        for index in range(docs):
            (single / f"tfjob-{index:05d}.yaml").write_text(
                yaml.safe_dump(tfjob(index), sort_keys=False)
            )
        (single / ".done").touch()
    schemas = RESULTS / "schemas"
    schemas.mkdir(parents=True, exist_ok=True)
    tool = str(BIN / "tfjob-kit")
    subprocess.run(
        [tool, "schema", "crd-json-schema", "-o", str(schemas / "tfjob-kubeflow-v1.json")],
        check=True,
    )
    subprocess.run([tool, "schema", "json", "-o", str(schemas / "tfjob-bundled.json")], check=True)
    return corpus, single, schemas


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--check-jsonschema-docs",
        type=int,
        default=1000,
        help="documents for check-jsonschema (default 1000)",
    )
    args = parser.parse_args()
    corpus, single, schemas = prepare(args.docs)
    kubeconform = kubeconform_binary()
    cj_docs = min(args.check_jsonschema_docs, args.docs)
    cj_files = sorted(str(p) for p in single.glob("*.yaml"))[:cj_docs]
    runs = [
        timed(
            "tfjob-kit (-j 1)",
            [str(BIN / "tfjob-kit"), "validate", "-j", "1", str(corpus)],
            args.docs,
            args.repeat,
        ),
        timed(
            f"tfjob-kit (-j 0: {os.cpu_count()} procs)*",
            [str(BIN / "tfjob-kit"), "validate", "-j", "0", str(corpus)],
            args.docs,
            args.repeat,
        ),
        timed(
            "kubeconform (-n 1)",
            [
                str(kubeconform),
                "-n",
                "1",
                "-strict",
                "-summary",
                "-schema-location",
                str(schemas / "{{ .ResourceKind }}{{ .KindSuffix }}.json"),
                str(corpus),
            ],
            args.docs,
            args.repeat,
        ),
        timed(
            "check-jsonschema",
            [
                str(BIN / "check-jsonschema"),
                "--schemafile",
                str(schemas / "tfjob-bundled.json"),
                *cj_files,
            ],
            cj_docs,
            1,
        ),
    ]
    reference = next(r for r in runs if r.name.startswith("kubeconform"))
    ref_rate = reference.docs / reference.seconds
    print(
        f"\nValidating {args.docs} TFJobs ({corpus.name}), best of {args.repeat}, "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'tool':<30} {'docs':>6} {'seconds':>8} {'docs/s':>9} {'vs kubeconform':>15} "
        f"{'CPU s':>7} {'peak RSS MiB':>13}"
    )
    results = []
    for run in runs:
        rate = run.docs / run.seconds
        print(
            f"{run.name:<30} {run.docs:>6} {run.seconds:>8.2f} {rate:>9.0f} "
            f"{rate / ref_rate:>14.2f}x {run.cpu_seconds:>7.2f} {run.peak_rss_mib:>13.0f}"
        )
        results.append(
            {
                "tool": run.name,
                "docs": run.docs,
                "seconds": round(run.seconds, 3),
                "docs_per_second": round(rate),
                "ratio": round(rate / ref_rate, 2),
                "cpu_seconds": round(run.cpu_seconds, 3),
                "peak_rss_mib": round(run.peak_rss_mib),
            }
        )
    print("* peak RSS of the parent process; each worker is a fork of it")
    summary = runs[0].output.strip().splitlines()[-1]
    print(f"\ntfjob-kit: {summary}\nkubeconform: {reference.output.strip().splitlines()[-1]}")
    (RESULTS / "validate.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
