"""Generate src/tfjob_kit/podcheck/feature_gates.json: Kubernetes' default feature gates, minor by
minor, from the newest release of the window.

The source is ``defaultVersionedKubernetesFeatureGates`` in ``pkg/features/kube_features.go`` of
the ``k8s.io/kubernetes`` Go module at the newest release in versions.toml (fetched with ``go mod
download``). Each gate lists the versions at which its default changed; a release emulates every
older minor from the same table, so the newest release's file says the defaults of every minor of
the window. The JSON keeps, per gate, ``[[minor, default], ...]`` oldest first.

Usage: python tools/gen_feature_gates.py [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from gen_k8s_schema import _module, write_or_check
from tfjob_kit.versions import load_versions, minor_order

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "tfjob_kit" / "podcheck" / "feature_gates.json"
SOURCE_IN_MODULE = "pkg/features/kube_features.go"
TABLE = "var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]"

_GATE = re.compile(r"^\t(?:\w+\.)?(\w+): \{\s*$")
_SPEC = re.compile(r'Version: version\.MustParse\("(\d+\.\d+)"\), Default: (true|false)')


def parse(source: str) -> dict[str, list[tuple[str, bool]]]:
    """Each gate of the versioned table with its (minor, default) changes, oldest first."""
    start = source.index(TABLE)
    body = source[start : source.index("\n}\n", start)]
    gates: dict[str, list[tuple[str, bool]]] = {}
    current: list[tuple[str, bool]] | None = None
    for line in body.splitlines()[1:]:
        if (gate := _GATE.match(line)) is not None:
            current = gates.setdefault(gate.group(1), [])
        elif current is not None and (spec := _SPEC.search(line)) is not None:
            current.append((spec.group(1), spec.group(2) == "true"))
    for name, specs in gates.items():
        if not specs:
            raise SystemExit(f"{SOURCE_IN_MODULE}: gate {name} has no versioned default")
        specs.sort(key=lambda spec: minor_order(spec[0]))
    return gates


def render(gates: dict[str, list[tuple[str, bool]]], release: str) -> str:
    document = {
        "generated": f"tools/gen_feature_gates.py from k8s.io/kubernetes {release} "
        f"{SOURCE_IN_MODULE}",
        "gates": {name: [list(spec) for spec in gates[name]] for name in sorted(gates)},
    }
    return json.dumps(document, indent=1) + "\n"


def newest_release() -> str:
    versions = load_versions(ROOT)
    releases = (versions.kubernetes, *versions.kubernetes_releases)
    return max(releases, key=lambda r: minor_order(r.lstrip("v")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args(argv)
    release = newest_release()
    source = (_module("k8s.io/kubernetes", release) / SOURCE_IN_MODULE).read_text()
    return write_or_check(OUTPUT, render(parse(source), release), args.check, release)


if __name__ == "__main__":
    sys.exit(main())
