"""Every `tfjob-kit` command in the README's sh blocks runs, with the exit code it promises."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
COMMANDS = [line.strip() for block in BLOCKS for line in block.splitlines()
            if re.match(r"\s*(cat .*\| )?tfjob-kit ", line)]


def test_readme_has_commands() -> None:
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize("line", COMMANDS)
def test_readme_command(line: str, tmp_path: Path) -> None:
    command, _, comment = line.partition("#")
    expected = int(m.group(1)) if (m := re.search(r"exits (\d)", comment)) else 0
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True,
                            text=True, check=False)
    assert result.returncode == expected, result.stdout + result.stderr


def test_readme_rule_config_example(tmp_path: Path) -> None:
    from tfjob_kit import config

    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(),
                                      re.S) if b.startswith("# .tfjob-kit.yaml")]
    path = tmp_path / ".tfjob-kit.yaml"
    path.write_text(block)
    loaded = config.from_file(str(path))
    assert "image-latest" in loaded.disabled and loaded.severities
