"""``make test-versions``: the oracle on every Kubernetes minor the local cluster runs.

For each minor (versions.toml's ``[kubernetes] version`` and ``releases``, or those given), the
differential tests run against that minor's real API server (``TFJOB_KIT_TEST_KUBERNETES``: the
test session's clusters run it): the pod cases, the generated TFJobs and the real-TFJob sample
through the operator, the operator's pods and Services, and ``validate --server``. On the
oldest and the newest minor the bootstrap runs too: ``site.yml`` twice, jobs through
``submit.yml``, Volcano's gangs, and a teardown that leaves nothing. Each minor's binaries are
built on first use (cached). Not part of ``make test`` nor of its budget.

The table (minor, what ran, passed/failed, minutes, the cached release's disk) is printed and
written to ``test-versions.md`` in the directory given with ``--out`` (default: a new temporary
one).

    python tools/test_versions.py                # every minor
    python tools/test_versions.py 1.37 1.34      # those
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tfjob_kit.cluster import build  # noqa: E402
from tfjob_kit.cluster.paths import bin_root  # noqa: E402
from tfjob_kit.versions import load_versions, minor_of, minor_order  # noqa: E402

DIFFERENTIAL = (
    "tests/integration/test_podcheck_containers.py",
    "tests/integration/test_podcheck_pod.py",
    "tests/integration/test_podcheck_scheduling.py",
    "tests/integration/test_podcheck_volumes.py",
    "tests/integration/test_pod_validation_agrees.py",
    "tests/integration/test_operator_pods.py",
    "tests/integration/test_validate_server_agrees.py",
    "tests/integration/test_dropped_fields.py",
)
BOOTSTRAP = ("tests/integration/test_bootstrap.py",)


@dataclass
class Row:
    minor: str
    release: str
    what: str
    passed: int = 0
    failed: int = 0
    minutes: float = 0.0
    disk: str = ""


def _disk(path: Path) -> str:
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return f"{size / 2**20:.0f} MiB"


def _run(minor: str, files: tuple[str, ...], junit: Path) -> tuple[int, int]:
    env = {**os.environ, "TFJOB_KIT_TEST_KUBERNETES": minor}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    command += ["-n", "2", "--dist", "loadfile", f"--junitxml={junit}", *files]
    subprocess.run(command, cwd=ROOT, env=env, check=False)
    suites = ET.parse(junit).getroot().iter("testsuite")
    total = failed = 0
    for suite in suites:
        total += int(suite.get("tests", 0)) - int(suite.get("skipped", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return total - failed, failed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("minors", nargs="*", help="the minors to run (default: every one)")
    parser.add_argument("--out", type=Path, help="where the table and the JUnit files go")
    args = parser.parse_args(argv)
    versions = load_versions()
    releases = {minor_of(r): r for r in (versions.kubernetes, *versions.kubernetes_releases)}
    minors = sorted(args.minors or releases, key=minor_order)
    unknown = [m for m in minors if m not in releases]
    if unknown:
        parser.error(f"not a minor the local cluster runs: {unknown} (known: {sorted(releases)})")
    edges = set(versions.kubernetes_window)
    out = args.out or Path(tempfile.mkdtemp(prefix="tfjob-kit-test-versions-"))
    out.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    for minor in minors:
        files = DIFFERENTIAL + (BOOTSTRAP if minor in edges else ())
        row = Row(
            minor, releases[minor], "differential" + (" + bootstrap" if minor in edges else "")
        )
        started = time.monotonic()
        row.passed, row.failed = _run(minor, files, out / f"junit-{minor}.xml")
        row.minutes = (time.monotonic() - started) / 60
        kube = build.components(versions.for_kubernetes(minor))["kube"]
        row.disk = _disk(bin_root() / kube.dirname)
        rows.append(row)
    table = [
        "| Kubernetes | release | what ran | passed | failed | minutes | cached binaries |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| {r.minor} | {r.release} | {r.what} | {r.passed} | {r.failed} | "
            f"{r.minutes:.1f} | {r.disk} |"
            for r in rows
        ),
    ]
    (out / "test-versions.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))
    print(f"\n(written to {out / 'test-versions.md'})")
    return 1 if any(r.failed for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
