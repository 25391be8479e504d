"""Generate the CRDs of the charts that install an upstream component, from its Go module.

Each chart's source is a folder of CRDs inside the component's Go module at the version pinned
in versions.toml, read from the Go module cache (`go env GOMODCACHE`) or fetched with
`go mod download` through the Go module proxy when it is not cached yet. The CRDs a chart needs
are copied verbatim, in a fixed order, into one file of its crds/:

* charts/volcano (volcano.sh/volcano, [volcano] version, config/crd/volcano/bases/):
  scheduling.volcano.sh podgroups and queues (vc-scheduler's cache, the pg/queue/job
  controllers); batch.volcano.sh jobs (the job and gc controllers: Volcano Jobs, seed 003's
  example); bus.volcano.sh commands (the job and queue controllers: `vcctl` commands);
  topology.volcano.sh hypernodes and nodeinfo.volcano.sh numatopologies (vc-scheduler starts
  informers for both unconditionally and waits for them to sync, so they must exist even when
  unused).
* charts/jobset (sigs.k8s.io/jobset, [jobset] version, config/components/crd/bases/): jobsets.
* charts/trainer (github.com/kubeflow/trainer/v2, [trainer] version, manifests/base/crds/):
  trainjobs, trainingruntimes, clustertrainingruntimes.
* charts/kueue (sigs.k8s.io/kueue, [kueue] version, config/components/crd/bases/): every Kueue CRD
  (the controller-manager watches them all). Five of them are served in two versions and converted
  by Kueue's webhook: the module's own kustomize patches (config/components/crd/patches, those its
  kustomization.yaml applies) add `spec.conversion`, here as in upstream's release manifests, naming
  the Service `kueue-webhook-service` in `kueue-system` (the kueue role points them at its release).

Every other CRD in a source folder must be listed in that source's `excluded` with the reason, so
a bump that adds a CRD fails here until someone decides where it belongs.

Usage: python tools/gen_upstream_crds.py [--check] [CHART ...]   (default: every chart)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tfjob_kit.cluster.kueue import CRDS as KUEUE_CRDS
from tfjob_kit.versions import Versions, load_versions

ROOT = Path(__file__).resolve().parent.parent
TOOL = "tools/gen_upstream_crds.py"


@dataclass(frozen=True)
class Source:
    """One chart's CRDs: the Go module, its pinned version, the folder in it, and the files."""

    module: str
    version: str  # the attribute of Versions
    bases: Path
    output: Path  # under ROOT
    label: str  # how the printed lines name the component
    # file in bases/ -> CRD name it must define; output order is this order.
    included: dict[str, str]
    excluded: dict[str, str] = field(default_factory=dict)
    # Kustomize patches in the module that add a conversion webhook (the module's kustomization
    # lists the ones it applies), and the Service they name: (namespace, name).
    conversion_patches: Path | None = None
    conversion_service: tuple[str, str] = ("", "")


SOURCES: dict[str, Source] = {
    "volcano": Source(
        "volcano.sh/volcano",
        "volcano",
        Path("config") / "crd" / "volcano" / "bases",
        Path("charts") / "volcano" / "crds" / "volcano-crds.yaml",
        "Volcano",
        {
            "scheduling.volcano.sh_podgroups.yaml": "podgroups.scheduling.volcano.sh",
            "scheduling.volcano.sh_queues.yaml": "queues.scheduling.volcano.sh",
            "batch.volcano.sh_jobs.yaml": "jobs.batch.volcano.sh",
            "bus.volcano.sh_commands.yaml": "commands.bus.volcano.sh",
            "topology.volcano.sh_hypernodes.yaml": "hypernodes.topology.volcano.sh",
            "nodeinfo.volcano.sh_numatopologies.yaml": "numatopologies.nodeinfo.volcano.sh",
        },
        {
            "batch.volcano.sh_cronjobs.yaml": (
                "cronjob-controller is not among the chart's controllers"
            ),
            "config.volcano.sh_colocationconfigurations.yaml": (
                "colocation needs vc-agent, not installed"
            ),
            "shard.volcano.sh_nodeshards.yaml": (
                "scheduler sharding mode and sharding-controller are off"
            ),
        },
    ),
    "jobset": Source(
        "sigs.k8s.io/jobset",
        "jobset",
        Path("config") / "components" / "crd" / "bases",
        Path("charts") / "jobset" / "crds" / "jobset-crds.yaml",
        "JobSet",
        {"jobset.x-k8s.io_jobsets.yaml": "jobsets.jobset.x-k8s.io"},
    ),
    "trainer": Source(
        "github.com/kubeflow/trainer/v2",
        "trainer",
        Path("manifests") / "base" / "crds",
        Path("charts") / "trainer" / "crds" / "trainer-crds.yaml",
        "Kubeflow Trainer",
        {
            "trainer.kubeflow.org_trainjobs.yaml": "trainjobs.trainer.kubeflow.org",
            "trainer.kubeflow.org_trainingruntimes.yaml": "trainingruntimes.trainer.kubeflow.org",
            "trainer.kubeflow.org_clustertrainingruntimes.yaml": (
                "clustertrainingruntimes.trainer.kubeflow.org"
            ),
        },
        {"kustomization.yaml": "not a CRD: kustomize's list of this folder"},
    ),
    "kueue": Source(
        "sigs.k8s.io/kueue",
        "kueue",
        Path("config") / "components" / "crd" / "bases",
        Path("charts") / "kueue" / "crds" / "kueue-crds.yaml",
        "Kueue",
        {f"kueue.x-k8s.io_{name.split('.')[0]}.yaml": name for name in KUEUE_CRDS},
        conversion_patches=Path("config") / "components" / "crd",
        conversion_service=("kueue-system", "kueue-webhook-service"),
    ),
}


def _go(*args: str) -> str:
    result = subprocess.run(["go", *args], capture_output=True, text=True, check=False, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"go {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def module_dir(source: Source, version: str) -> Path:
    """The extracted module@version: the module cache, else `go mod download`."""
    cached = Path(_go("env", "GOMODCACHE").strip()) / f"{source.module}@{version}"
    if (cached / source.bases).is_dir():
        return cached
    info = json.loads(_go("mod", "download", "-json", f"{source.module}@{version}"))
    return Path(info["Dir"])


def _body(path: Path, expected_name: str) -> str:
    """The CRD document of path, without its leading `---`; checked to define expected_name."""
    text = path.read_text(encoding="utf-8")
    documents = [d for d in yaml.safe_load_all(text) if d is not None]
    if len(documents) != 1:
        raise SystemExit(f"{path}: expected one document, found {len(documents)}")
    crd = documents[0]
    if crd.get("kind") != "CustomResourceDefinition" or (
        crd.get("metadata", {}).get("name") != expected_name
    ):
        raise SystemExit(f"{path}: expected the CustomResourceDefinition {expected_name}")
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
        raise SystemExit(f"{path}: expected apiextensions.k8s.io/v1")
    lines = text.strip("\n").splitlines()
    if lines and lines[0].strip() == "---":
        lines = lines[1:]
    return "\n".join(lines) + "\n"


def _conversions(source: Source, folder: Path) -> dict[str, str]:
    """CRD name -> the YAML lines of its `conversion:` (indented under `spec:`), from the patches
    the module's kustomization applies, with the Service upstream's release names."""
    if source.conversion_patches is None:
        return {}
    root = folder / source.conversion_patches
    kustomization = yaml.safe_load((root / "kustomization.yaml").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for entry in kustomization.get("patches") or []:
        patch = yaml.safe_load((root / entry["path"]).read_text(encoding="utf-8"))
        conversion = patch["spec"]["conversion"]
        if set(patch["spec"]) != {"conversion"}:
            raise SystemExit(f"{root / entry['path']}: a patch of more than spec.conversion")
        namespace, name = source.conversion_service
        conversion["webhook"]["clientConfig"]["service"].update(namespace=namespace, name=name)
        text = yaml.safe_dump({"conversion": conversion}, sort_keys=False)
        found[patch["metadata"]["name"]] = "".join(f"  {line}\n" for line in text.splitlines())
    return found


def _with_conversion(body: str, conversion: str, path: Path) -> str:
    """The CRD text with `conversion` inserted as the first field of its spec."""
    marker = "\nspec:\n"
    if body.count(marker) != 1:
        raise SystemExit(f"{path}: expected one top-level `spec:` line")
    return body.replace(marker, marker + conversion, 1)


def render(source: Source, version: str, folder: Path) -> str:
    bases = folder / source.bases
    present = sorted(p.name for p in bases.glob("*.yaml"))
    known = {**source.included, **source.excluded}
    unknown = [name for name in present if name not in known]
    if unknown:
        raise SystemExit(
            f"{source.module}@{version} has CRDs this generator does not know: "
            f"{', '.join(unknown)}; add each to the source's included or excluded in {TOOL}"
        )
    missing = [name for name in source.included if name not in present]
    if missing:
        raise SystemExit(f"{source.module}@{version} lacks {', '.join(missing)} in {source.bases}")
    header = [
        f"# GENERATED by {TOOL} -- do not edit.",
        f"# Source: {source.module}@{version}, {source.bases.as_posix()}/ (verbatim).",
        f"# Regenerate: python {TOOL}; verify: --check.",
        "# Helm installs these before the templates and never upgrades or deletes them.",
    ]
    if source.excluded:
        header.append("# Left out on purpose:")
        header.extend(f"#   {name}: {reason}" for name, reason in source.excluded.items())
    conversions = _conversions(source, folder)
    if conversions:
        namespace, service = source.conversion_service
        header.append(
            f"# spec.conversion added to {len(conversions)} of them from "
            f"{source.conversion_patches.as_posix() if source.conversion_patches else ''}"
            f"/patches (its kustomization's), naming the Service {namespace}/{service}."
        )
    unknown_patched = set(conversions) - set(source.included.values())
    if unknown_patched:
        raise SystemExit(f"conversion patches for CRDs not included: {sorted(unknown_patched)}")
    parts = ["\n".join(header) + "\n"]
    for name, crd_name in source.included.items():
        body = _body(bases / name, crd_name)
        if crd_name in conversions:
            body = _with_conversion(body, conversions[crd_name], bases / name)
        parts.append(f"---\n# {source.bases.as_posix()}/{name}\n" + body)
    return "".join(parts)


def generate(chart: str, versions: Versions, check: bool) -> int:
    source = SOURCES[chart]
    version = getattr(versions, source.version)
    text = render(source, version, module_dir(source, version))
    output = ROOT / source.output
    if check:
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        if current != text:
            print(f"{source.output} is out of date: run `python {TOOL} {chart}`", file=sys.stderr)
            return 1
        print(f"{source.output} is up to date ({source.label} {version})")
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    count = len(source.included)
    print(f"wrote {source.output} ({source.label} {version}, {count} CRDs, {len(text)} bytes)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    parser.add_argument("charts", nargs="*", metavar="CHART", help=f"of {', '.join(SOURCES)}")
    args = parser.parse_args(argv)
    unknown = [chart for chart in args.charts if chart not in SOURCES]
    if unknown:
        parser.error(
            f"no CRDs are generated for {', '.join(unknown)}; charts: {', '.join(SOURCES)}"
        )
    versions = load_versions(ROOT)
    results = [generate(chart, versions, args.check) for chart in args.charts or SOURCES]
    return max(results)


if __name__ == "__main__":
    sys.exit(main())
