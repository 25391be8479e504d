"""``python -m tfjob_kit.runtimes``: the runtimes tfjob-kit ships, as one YAML stream (what the
trainer role applies)."""

from __future__ import annotations

import sys

import yaml

from tfjob_kit.runtimes import shipped

if __name__ == "__main__":
    sys.stdout.write(yaml.safe_dump_all(shipped(), sort_keys=False))
