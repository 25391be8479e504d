"""`tfjob_kit.images` reads site.yml and the roles as Ansible does: the roles site.yml includes
for each option, and each role's composed chart values (or manifest), compared here with what
ansible-playbook itself evaluates from the same role files (no cluster: the roles are imported
with `when: false`, so only their variables load). The rendering side is
tests/charts/test_images.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tfjob_kit import ansible_vars, images

ROOT = Path(__file__).resolve().parents[2]
# Made-up digests: they name no real image.
DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64
# Each role whose output `tfjob-kit images` renders, with the variable that holds it.
COMPOSED = {
    "training_operator": "training_operator_chart_values",
    "volcano": "volcano_chart_values",
    "kube_batch": "kube_batch_chart_values",
    "nvidia_device_plugin": "nvidia_device_plugin_chart_values",
    "tfjob_smoke": "tfjob_smoke_job",
}
VARIABLE_SETS = {
    "defaults": {},
    "mirror": {
        "tfjob_kit_image_registry": "mirror.example.com:5000/tfjob",
        "tfjob_kit_image_pull_secrets": [{"name": "mirror-pull"}],
        "volcano_admission_image": {"registry": "internal.example.com", "digest": DIGEST_A},
        "volcano_scheduler_image": {"digest": DIGEST_B},
        "kube_batch_image": {"tag": "v0.5.1", "digest": DIGEST_B},
        "training_operator_image": {"digest": DIGEST_A},
        "nvidia_device_plugin_image": {"digest": DIGEST_B},
        "nvidia_device_plugin_time_slicing_replicas": 4,
        "nvidia_device_plugin_values": {"image": {"tag": "v0.17.3"}},
        "training_operator_gang_scheduler": "volcano",
        "tfjob_smoke_image": "img:1\n  securityContext: {privileged: true}",
        "tfjob_smoke_gang_scheduling": True,
    },
}


def site(**variables: Any) -> list[tuple[str, dict[str, Any]]]:
    gpu = variables.pop("gpu", True)
    return images.site_roles(images.Options(variables, gpu), ROOT)


def test_site_yml_includes_the_roles_of_the_options() -> None:
    assert [role for role, _ in site(tfjob_kit_scheduler="volcano")] == [
        "volcano",
        "training_operator",
        "nvidia_device_plugin",
        "tfjob_smoke",
    ]
    assert [role for role, _ in site(tfjob_kit_scheduler="kube-batch", gpu=False)] == [
        "kube_batch",
        "training_operator",
        "tfjob_smoke",
    ]
    bare = site(tfjob_kit_scheduler="none", tfjob_kit_smoke_test=False, gpu=False)
    assert [role for role, _ in bare] == ["training_operator"]


def test_the_includes_vars_are_site_ymls() -> None:
    roles = dict(site(tfjob_kit_scheduler="volcano"))
    operator = ansible_vars.Variables(
        {"tfjob_kit_scheduler": "volcano"}, roles["training_operator"]
    )
    assert operator.get("training_operator_gang_scheduler") == "volcano"
    smoke = ansible_vars.Variables({"tfjob_kit_scheduler": "none"}, roles["tfjob_smoke"])
    assert smoke.get("tfjob_smoke_gang_scheduling") is False


def composed_by_ansible(tmp_path: Path, variables: dict[str, Any]) -> dict[str, Any]:
    """Every role's composed output as ansible-playbook evaluates it, with `variables` as extra
    variables (above the roles' defaults, as group_vars are)."""
    out = tmp_path / "composed.json"
    imports = [
        {"ansible.builtin.import_role": {"name": f"tfjob.kit.{role}"}, "when": False}
        for role in COMPOSED
    ]
    content = (
        "{{ {" + ", ".join(f"'{role}': {var}" for role, var in COMPOSED.items()) + "} | to_json }}"
    )
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "connection": "local",
            "tasks": [*imports, {"ansible.builtin.copy": {"dest": str(out), "content": content}}],
        }
    ]
    (tmp_path / "play.yml").write_text(json.dumps(play))
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "localhost,",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "-e",
            f"@{tmp_path / 'vars.json'}",
            str(tmp_path / "play.yml"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    composed: dict[str, Any] = json.loads(out.read_text())
    return composed


@pytest.mark.parametrize("name", sorted(VARIABLE_SETS))
def test_the_roles_values_are_ansibles(tmp_path: Path, name: str) -> None:
    variables = VARIABLE_SETS[name]
    expected = composed_by_ansible(tmp_path, variables)
    for role in COMPOSED:
        deployment = images.role_deployment(role, variables, {}, ROOT)
        assert deployment is not None
        ours = deployment.manifest if deployment.manifest is not None else deployment.values
        assert json.loads(json.dumps(ours)) == expected[role], role


def test_templated_strings_stay_strings_as_in_ansible() -> None:
    """A tag such as "1.10" reached through a variable is the string, not the number 1.1."""
    variables = ansible_vars.Variables(
        {"tag": "1.10", "hex": "0x10", "n": 8, "image": {"tag": "{{ tag }}", "x": "{{ hex }}"}}
    )
    assert variables.get("image") == {"tag": "1.10", "x": "0x10"}
    assert variables.template("{{ n + 1 }}") == 9
    assert variables.template("{{ tag }}-{{ n }}") == "1.10-8"


def test_without_mirror_drops_every_registry_setting() -> None:
    upstream = images.without_mirror(
        {
            "tfjob_kit_image_registry": "m.io",
            "volcano_image_registry": "v.io",
            "volcano_admission_image": {"registry": "i.io", "tag": "x"},
            "training_operator_values": {"image": {"registry": "o.io", "tag": "y"}, "n": 1},
            "tfjob_kit_scheduler": "volcano",
        }
    )
    assert upstream == {
        "volcano_admission_image": {"tag": "x"},
        "training_operator_values": {"image": {"tag": "y"}, "n": 1},
        "tfjob_kit_scheduler": "volcano",
    }


def test_digests_in_a_variables_file_reach_every_chart(tmp_path: Path) -> None:
    """`tfjob-kit images -e vars.yml`: a digest given to a role's image variable is in the values
    the role installs its chart with (so the chart renders <repository>@<digest>), and stays
    when the mirror is taken away (the upstream source of `-o mapping` is pinned too)."""
    path = tmp_path / "vars.yml"
    path.write_text(
        "tfjob_kit_scheduler: volcano\n"
        "tfjob_kit_image_registry: mirror.example.com\n"
        f"nvidia_device_plugin_image: {{digest: '{DIGEST_A}'}}\n"
        f"training_operator_image: {{digest: '{DIGEST_B}'}}\n"
        f"volcano_scheduler_image: {{digest: '{DIGEST_A}'}}\n"
        f"volcano_controllers_image: {{registry: other.example.com, digest: '{DIGEST_B}'}}\n"
        f"volcano_admission_image: {{tag: not-this-tag, digest: '{DIGEST_A}'}}\n"
    )
    variables = images.read_variables(path)
    for options in (images.Options(variables), images.Options(images.without_mirror(variables))):
        found = {d.role: d.values for d in images.deployments(options, ROOT)}
        assert found["nvidia_device_plugin"]["image"]["digest"] == DIGEST_A
        assert found["training_operator"]["image"]["digest"] == DIGEST_B
        volcano = found["volcano"]
        assert volcano["scheduler"]["image"] == {"digest": DIGEST_A}
        assert volcano["controllers"]["image"]["digest"] == DIGEST_B
        assert volcano["admission"]["image"] == {"tag": "not-this-tag", "digest": DIGEST_A}
    assert images.without_mirror(variables)["volcano_controllers_image"] == {"digest": DIGEST_B}


def test_a_missing_variables_file_is_an_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tfjob_kit.cli", "images", "-e", str(tmp_path / "nope.yml")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2 and "nope.yml: no such variables file" in proc.stderr, proc.stderr


def test_variables_are_templated_in_a_sandbox(tmp_path: Path) -> None:
    """A variable file cannot reach Python's internals (Ansible refuses the same file)."""
    marker = tmp_path / "ran"
    payload = "{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}"
    variables = ansible_vars.Variables({"tfjob_kit_image_registry": payload})
    with pytest.raises(ansible_vars.VariablesError, match=r"tfjob_kit_image_registry: .*unsafe"):
        variables.get("tfjob_kit_image_registry")
    assert not marker.exists()
    # and what Ansible's templates do still works
    plain = ansible_vars.Variables({"a": {"b": 1}, "c": "{{ a | combine({'d': [1, 2]}) }}"})
    assert plain.get("c") == {"b": 1, "d": [1, 2]}


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("volcano_release", "--post-renderer=/bin/sh"),
        ("volcano_release", "a" * 54),
        ("volcano_release", "Upper"),
        ("volcano_namespace", "--kubeconfig=/x"),
        ("volcano_namespace", "a.b"),
    ],
)
def test_release_and_namespace_names_are_checked_before_helm(variable: str, value: str) -> None:
    options = images.Options({"tfjob_kit_scheduler": "volcano", variable: value})
    with pytest.raises(images.ImagesError, match=f"{variable}: "):
        images.deployments(options, ROOT)
