"""``tfjob-kit images``: every image ``playbooks/site.yml`` would deploy (``images.py``)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfjob_kit import extras, images
from tfjob_kit.ansible_vars import VariablesError

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "images",
        help="list every image site.yml would deploy (for a registry mirror)",
        description="List every container image playbooks/site.yml would deploy for the chosen "
        "options, rendered from the charts with the values the roles compose: one reference "
        "per line (repo:tag, or repo@sha256:... where a chart pins a digest).",
    )
    parser.add_argument(
        "--scheduler",
        choices=["volcano", "kube-batch", "kueue", "none"],
        help="the gang scheduler (tfjob_kit_scheduler; default: the variables', else volcano)",
    )
    parser.add_argument(
        "--no-gpu",
        dest="gpu",
        action="store_false",
        help="leave out the NVIDIA device plugin (site.yml installs it where nodes are "
        "labelled nvidia.com/gpu.present=true)",
    )
    parser.add_argument(
        "--no-smoke-test",
        dest="smoke_test",
        action="store_false",
        default=None,
        help="leave out the smoke TFJob's image (tfjob_kit_smoke_test: false)",
    )
    parser.add_argument(
        "--trainer",
        action="store_true",
        default=None,
        help="with JobSet and Kubeflow Trainer v2 (tfjob_kit_trainer: true)",
    )
    parser.add_argument(
        "--registry",
        metavar="HOST[:PORT][/PATH]",
        help="the mirror (tfjob_kit_image_registry): list the images as the cluster pulls them",
    )
    parser.add_argument(
        "-e",
        "--vars",
        dest="var_files",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="YAML of inventory variables (e.g. group_vars/all.yml); repeatable, later wins",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=["list", "mapping", "json"],
        default="list",
        help="list: one reference per line; mapping: SOURCE=MIRROR lines (needs a registry); "
        "json: each image with its upstream source and where it is used",
    )
    parser.add_argument(
        "--kube-version",
        help="the Kubernetes version the charts render for (default: the pinned one, or the "
        "newest a chart allows)",
    )
    parser.add_argument("--helm", metavar="PATH", help="helm (default: the built one, else PATH)")
    parser.set_defaults(run=run)


def default_helm() -> str:
    """The helm `tfjob-kit cluster build` built, else the one on PATH."""
    from tfjob_kit.cluster import build
    from tfjob_kit.cluster.paths import ClusterError
    from tfjob_kit.versions import VersionsError

    try:
        return str(build.helm_path())
    except (ClusterError, VersionsError):
        found = shutil.which("helm")
        if found is None:
            raise images.ImagesError(
                "no helm: run `tfjob-kit cluster build`, or pass --helm"
            ) from None
        return found


def _options(args: argparse.Namespace) -> images.Options:
    variables: dict[str, Any] = {}
    for path in args.var_files:
        variables.update(images.read_variables(path))
    if args.scheduler:
        variables["tfjob_kit_scheduler"] = args.scheduler
    variables.setdefault("tfjob_kit_scheduler", images.DEFAULT_SCHEDULER)
    if args.smoke_test is not None:
        variables["tfjob_kit_smoke_test"] = args.smoke_test
    if args.trainer:
        variables["tfjob_kit_trainer"] = True
    if args.registry is not None:
        variables["tfjob_kit_image_registry"] = args.registry.rstrip("/")
    return images.Options(variables, args.gpu)


def run(args: argparse.Namespace) -> int:
    # The roles' variables are rendered by Ansible's template engine (tfjob_kit.ansible_vars).
    extras.require("ansible", "tfjob-kit images")
    try:
        options = _options(args)
        helm = args.helm or default_helm()
        kube_version = args.kube_version
        if args.output == "list":
            found = sorted({use.image for use in images.collect(options, helm, kube_version)})
            print("\n".join(found))
        elif args.output == "mapping":
            if not options.variables.get("tfjob_kit_image_registry"):
                raise images.ImagesError(
                    "-o mapping needs the mirror: --registry or a variables file"
                )
            for source, mirror in images.mapping(options, helm, kube_version):
                print(f"{source}={mirror}")
        else:
            print(json.dumps(_by_image(options, helm, kube_version), indent=2))
    except (images.ImagesError, VariablesError) as exc:
        print(f"tfjob-kit images: {exc}", file=sys.stderr)
        return 2
    return 0


def _by_image(options: images.Options, helm: str, kube_version: str | None) -> list[dict[str, Any]]:
    """Each image with its upstream source and where it is used (`-o json`)."""
    upstream = images.Options(images.without_mirror(options.variables), options.gpu)
    sources = {(u.role, u.where): u.image for u in images.collect(upstream, helm, kube_version)}
    by_image: dict[str, dict[str, Any]] = {}
    for use in images.collect(options, helm, kube_version):
        entry = by_image.setdefault(
            use.image,
            {"image": use.image, "source": sources.get((use.role, use.where)), "uses": []},
        )
        entry["uses"].append({"role": use.role, "where": use.where})
    return [by_image[image] for image in sorted(by_image)]
