"""The main job (`make demo`): what tfjob-kit knows about the seeds' TFJobs.

Until the local-cluster bootstrap lands, the demo stays offline: it validates the manifests from
the source documents, converts the legacy and T9k jobs to v1 TFJobs, shows the TF_CONFIG each
replica of the dist-mnist job receives, and turns that job into a Volcano Job. Each step checks
the exit code it must have, so the demo fails loudly when the product regresses.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = shutil.which("tfjob-kit", path=str(Path(sys.executable).parent)) or "tfjob-kit"
SEEDS = ROOT / "tests" / "data" / "seeds"


def step(title: str, args: list[str], expect: int) -> str:
    print(f"\n=== {title}\n$ tfjob-kit {' '.join(args)}", flush=True)
    result = subprocess.run([TOOL, *args], capture_output=True, text=True, check=False,
                            cwd=ROOT)
    print(result.stdout + result.stderr, end="", flush=True)
    if result.returncode != expect:
        raise SystemExit(f"demo: `tfjob-kit {' '.join(args)}` exited {result.returncode}, "
                         f"expected {expect}")
    return result.stdout


def main() -> int:
    step("Validate the manifests of the source documents (they carry tutorial mistakes)",
         ["validate", str(SEEDS.relative_to(ROOT))], expect=1)
    step("The runnable examples pass", ["validate", "examples/tfjobs"], expect=0)
    with tempfile.TemporaryDirectory() as tmp:
        converted = Path(tmp) / "converted.yaml"
        step("Convert the v1beta1 MASTER job and the T9k TensorFlowTrainingJob to v1",
             ["convert", "-o", str(converted),
              str((SEEDS / "seed001-v1beta1-master-gpu.yaml").relative_to(ROOT)),
              str((SEEDS / "seed004-t9k-tensorflowtrainingjob.yaml").relative_to(ROOT))],
             expect=0)
        print(converted.read_text())
    step("What the operator will create for dist-mnist, and the TF_CONFIG of each replica",
         ["explain", "examples/tfjobs/dist-mnist.yaml"], expect=0)
    step("The same training as a Volcano Job (seed 003's TF_CONFIG from host files)",
         ["convert", "--to", "volcano", "examples/tfjobs/dist-mnist.yaml"], expect=0)
    print("\ndemo: all steps behaved as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
