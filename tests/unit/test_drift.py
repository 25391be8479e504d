"""Facts that must stay copies, held equal to their source.

* The tfjob module's wait conditions (its argument spec and DOCUMENTATION) are the library's
  (tfjob_kit.kube.status), and its defaults are the library's Request defaults.
* objects_info documents each entry of its queries as it checks it.
* The minimum Kubernetes version is versions.toml's: the charts' kubeVersion, site.yml's
  preflight and the README follow it.
* Each role's defaults/main.yml, meta/argument_specs.yml and README table name the same
  variables with the same defaults; teardown.yml reads the roles' release names.
* The library runs this checkout's GPU module_utils (the editable install copies the collection).
* The roles read the local cluster's marker ConfigMap where `cluster up` writes it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

import checkout_scripts
from tfjob_kit.kube import diagnose, jobs
from tfjob_kit.kube.info import Query
from tfjob_kit.kube.status import VOLCANO_ALIASES, VOLCANO_FINISHED, WAIT_CONDITIONS
from tfjob_kit.kube.task import Request
from tfjob_kit.versions import load_versions

ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p for p in (ROOT / "roles").iterdir() if (p / "defaults" / "main.yml").is_file())


def _module(name: str) -> ModuleType:
    """A module of this checkout's plugins/modules, imported from its file."""
    return checkout_scripts.load(f"plugins/modules/{name}.py")


def _documented_options(module: ModuleType) -> dict[str, Any]:
    options: dict[str, Any] = yaml.safe_load(module.DOCUMENTATION)["options"]
    return options


# --------------------------------------------------------------------------- wait conditions


def _queue_return(name: str) -> dict[str, Any]:
    jobs = yaml.safe_load(_module(name).RETURN)["jobs"]
    queue: dict[str, Any] = jobs["contains"]["queue"]["contains"]
    return queue


def test_the_queue_result_is_documented_once_as_the_library_returns_it() -> None:
    """tfjob and tfjob_info return the same `queue` (kueue.Admission.as_dict): both document
    each of its keys, the same way."""
    from tfjob_kit.kueue import Admission

    keys = set(Admission("w", "Waiting", "", "", "", False).as_dict())
    assert set(_queue_return("tfjob")) == keys
    assert _queue_return("tfjob_info") == _queue_return("tfjob")


def test_the_modules_wait_conditions_are_the_librarys() -> None:
    tfjob = _module("tfjob")
    assert list(WAIT_CONDITIONS) == tfjob.CONDITIONS
    spec, documented = tfjob.argument_spec(), _documented_options(tfjob)
    for option in ("wait_for", "fail_on"):
        assert spec[option]["choices"] == list(WAIT_CONDITIONS), option
        assert documented[option]["choices"] == list(WAIT_CONDITIONS), option


def test_the_module_documents_the_volcano_aliases() -> None:
    """wait_for's description names each finished Volcano phase that counts as another
    condition, as status.VOLCANO_ALIASES reads it."""
    description = _documented_options(_module("tfjob"))["wait_for"]["description"]
    text = " ".join(" ".join(description).split())
    for target in sorted({VOLCANO_ALIASES[p] for p in VOLCANO_FINISHED if p in VOLCANO_ALIASES}):
        phases = [p for p in VOLCANO_FINISHED if VOLCANO_ALIASES.get(p) == target]
        verb = "counts" if len(phases) == 1 else "count"
        said = " and ".join(f"C({p})" for p in phases) + f" also {verb} as V({target})"
        assert said in text, said


def test_the_modules_defaults_and_choices_are_the_librarys() -> None:
    """Every tfjob option the library's Request also has: the same default; validate and
    backend: the library's literal choices (tfjob_info's backend too)."""
    tfjob = _module("tfjob")
    spec, documented = tfjob.argument_spec(), _documented_options(tfjob)
    request = {f.name: f for f in dataclasses.fields(Request)}
    shared = sorted(set(spec) & set(request) & {n for n, o in spec.items() if "default" in o})
    assert {
        "wait_for",
        "fail_on",
        "wait_timeout",
        "unschedulable_grace",
        "validate",
        "backend",
        "preflight",
    } <= set(shared)
    for name in shared:
        field = request[name]
        default = (
            field.default_factory()
            if field.default_factory is not dataclasses.MISSING
            else field.default
        )
        assert spec[name]["default"] == default, name
        assert documented[name]["default"] == default, name
    assert spec["validate"]["choices"] == list(get_args(jobs.ValidateMode))
    assert spec["backend"]["choices"] == list(get_args(jobs.Backend))
    assert _module("tfjob_info").argument_spec()["backend"]["choices"] == list(
        get_args(jobs.Backend)
    )


def test_the_unschedulable_grace_is_one_default_everywhere() -> None:
    """The wait's grace for Unschedulable pods: diagnose.py's default, Request's and Query's,
    and both modules' (argument spec and DOCUMENTATION)."""
    grace = diagnose.DEFAULT_UNSCHEDULABLE_GRACE
    assert grace >= 60
    assert Request().unschedulable_grace == Query().unschedulable_grace == grace
    for name in ("tfjob", "tfjob_info"):
        module = _module(name)
        assert module.argument_spec()["unschedulable_grace"]["default"] == grace, name
        assert _documented_options(module)["unschedulable_grace"]["default"] == grace, name


def test_objects_info_documents_each_query_option_as_it_checks_it() -> None:
    """An entry of objects_info's queries is checked against QUERY_OPTIONS (its keys are the
    user's, so the argument spec has no suboptions and validate-modules compares nothing)."""
    module = _module("objects_info")
    documented = _documented_options(module)["queries"]["suboptions"]
    assert set(documented) == set(module.QUERY_OPTIONS)
    for name, spec in module.QUERY_OPTIONS.items():
        keys = ("type", "elements", "default", "required")
        assert {k: documented[name].get(k) for k in keys} == {k: spec.get(k) for k in keys}, name


# --------------------------------------------------------------------------- minimum Kubernetes


def _minimum() -> str:
    """The oldest minor of the toolkit's window (versions.toml [kubernetes])."""
    return load_versions().kubernetes_window[0]


def _newest() -> str:
    return load_versions().kubernetes_window[1]


def _chart(name: str) -> dict[str, Any]:
    chart: dict[str, Any] = yaml.safe_load((ROOT / "charts" / name / "Chart.yaml").read_text())
    return chart


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@pytest.mark.parametrize("chart", ["training-operator", "tfjob"])
def test_the_toolkits_charts_need_the_minimum(chart: str) -> None:
    assert _chart(chart)["kubeVersion"] == f">={_minimum()}.0-0"


def test_the_operator_chart_names_the_newest() -> None:
    annotations = _chart("training-operator")["annotations"]
    assert annotations["tfjob-kit.io/kubernetes-newest"] == _newest()


@pytest.mark.parametrize("chart", ["jobset", "trainer"])
def test_the_trainer_charts_need_trainers_minimum(chart: str) -> None:
    """Kubeflow Trainer v2's own floor, which these are installed for (site.yml's preflight
    holds a cluster to the toolkit's window first)."""
    minimum = tomllib.loads((ROOT / "versions.toml").read_text())["kubernetes"]["trainer_minimum"]
    assert _version(minimum) <= _version(_newest())
    assert _chart(chart)["kubeVersion"] == f">={minimum}.0-0"


def test_the_kueue_chart_needs_kueues_minimum() -> None:
    """Kueue v0.19's own floor (site.yml's preflight holds a cluster to the toolkit's window
    first)."""
    minimum = tomllib.loads((ROOT / "versions.toml").read_text())["kubernetes"]["kueue_minimum"]
    assert _version(minimum) <= _version(_newest())
    assert _chart("kueue")["kubeVersion"] == f">={minimum}.0-0"


@pytest.mark.parametrize("chart", ["volcano", "nvidia-device-plugin"])
def test_the_other_charts_run_on_the_minimum(chart: str) -> None:
    """Their own floors (the upstream components') are no higher than the toolkit's."""
    match = re.fullmatch(r">=([0-9]+\.[0-9]+)\.0-0", _chart(chart)["kubeVersion"])
    assert match, _chart(chart)["kubeVersion"]
    assert _version(match.group(1)) <= _version(_minimum())


def test_the_readme_states_the_window() -> None:
    text = " ".join((ROOT / "README.md").read_text().split())
    assert f"Kubernetes is {_minimum()} or newer and at most {_newest()}" in text


def _site_minimum(*extra: str, key: str = "tfjob_kit_minimum") -> str:
    """What site.yml's version preflight compares against (its `key`), rendered by Ansible."""
    plays = yaml.safe_load((ROOT / "playbooks" / "site.yml").read_text())
    tasks = [t for play in plays for t in play.get("tasks", [])]
    (preflight,) = [t for t in tasks if "tfjob_kit_minimum" in t.get("vars", {})]
    chart = preflight["vars"]["tfjob_kit_operator_chart"].strip()
    expression = (
        preflight["vars"][key].strip().replace("tfjob_kit_operator_chart", f"({chart[2:-2]})")
    )
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible"),
            "localhost",
            "--playbook-dir",
            str(ROOT / "playbooks"),
            "-m",
            "ansible.builtin.debug",
            "-a",
            json.dumps({"msg": expression}),
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_NOCOLOR": "1", "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r'"msg": "([^"]*)"', result.stdout)
    assert found, result.stdout
    return found.group(1)


def test_site_yml_preflight_reads_the_window_from_the_chart() -> None:
    assert _site_minimum() == _minimum()
    assert _site_minimum("-e", "tfjob_kit_min_kubernetes=1.31") == "1.31"
    assert _site_minimum(key="tfjob_kit_newest") == _newest()
    assert _site_minimum("-e", "tfjob_kit_max_kubernetes=1.40", key="tfjob_kit_newest") == "1.40"


# --------------------------------------------------------------------------- roles


def _is_template(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def _defaults(role: Path) -> dict[str, Any]:
    defaults: dict[str, Any] = yaml.safe_load((role / "defaults" / "main.yml").read_text())
    return defaults


def _options(role: Path) -> dict[str, Any]:
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())
    options: dict[str, Any] = specs["argument_specs"]["main"]["options"]
    return options


def _readme_table(role: Path) -> dict[str, str]:
    """The README's role variables: name -> the default cell (for "`a` / `b`" rows, each name
    gets its part)."""
    text = (role / "README.md").read_text()
    section = text.split("## Role variables", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not line.startswith("|") or len(cells) < 3 or cells[0] in ("variable", "---"):
            continue
        names = re.findall(r"`([^`]+)`", cells[0])
        parts = cells[1].split(" / ") if len(names) > 1 else [cells[1]]
        assert len(parts) == len(names), line
        for name, part in zip(names, parts, strict=True):
            assert name not in rows, f"{role.name}: {name} twice in the README"
            rows[name] = part
    return rows


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.name)
def test_role_defaults_are_its_argument_specs(role: Path) -> None:
    defaults, options = _defaults(role), _options(role)
    assert set(options) == set(defaults)
    for name, option in options.items():
        if "default" in option:
            assert option["default"] == defaults[name], name
        else:  # only a computed default may be left to defaults/main.yml
            assert _is_template(defaults[name]), f"{name}: no default in argument_specs.yml"
    spec = {name: {k: v for k, v in o.items() if k != "description"} for name, o in options.items()}
    result = ArgumentSpecValidator(spec).validate(
        {k: v for k, v in defaults.items() if not _is_template(v)}
    )
    assert not result.error_messages


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.name)
def test_role_readme_table_is_its_defaults(role: Path) -> None:
    defaults, table = _defaults(role), _readme_table(role)
    assert sorted(table) == sorted(defaults)
    for name, cell in table.items():
        spans = re.findall(r"`([^`]*)`", cell)
        whole = re.fullmatch(r"`([^`]*)`", cell)
        if _is_template(defaults[name]):  # computed: in words, or the template itself
            assert not whole or whole.group(1) == defaults[name], name
        else:
            assert whole, f"{name}: default {cell!r} is not one `value`"
            assert yaml.safe_load(spans[0]) == defaults[name], name


def test_teardown_reads_every_releases_names_from_its_role() -> None:
    """teardown.yml removes and checks every release a role installs, by the role's own
    variables (its defaults, visible through include_role public: true)."""
    plays = yaml.safe_load((ROOT / "playbooks" / "teardown.yml").read_text())
    (play,) = [p for p in plays if "tfjob_kit_releases" in p.get("vars", {})]
    named = {
        (re.sub(r"[{} ]", "", r["name"]), re.sub(r"[{} ]", "", r["namespace"]))
        for r in play["vars"]["tfjob_kit_releases"]
    }
    roles = {r.name for r in ROLES if f"{r.name}_release" in _defaults(r)}
    assert named == {(f"{r}_release", f"{r}_namespace") for r in roles}
    includes = [
        t["ansible.builtin.include_role"]
        for t in play["tasks"]
        if "ansible.builtin.include_role" in t
    ]
    public = {i["name"].removeprefix("tfjob.kit.") for i in includes if i.get("public") is True}
    assert roles <= public


# --------------------------------------------------------------------------- installed copy


def test_the_library_runs_this_checkouts_gpu_module_utils() -> None:
    """tfjob_kit.gpu re-exports the collection's module_utils, which an editable install copies
    into site-packages: after changing plugins/module_utils/gpu.py, reinstall
    (pip install -e .)."""
    from tfjob_kit import gpu

    installed = Path(sys.modules[gpu.collect.__module__].__file__ or "")
    assert installed.read_bytes() == (ROOT / "plugins" / "module_utils" / "gpu.py").read_bytes(), (
        f"{installed} is not this checkout's plugins/module_utils/gpu.py: pip install -e ."
    )


def _helm_release_uses(role: Path) -> dict[str, list[str]]:
    """What each task file of the role does with Helm releases, in order: "install" (a
    kubernetes.core.helm task with a chart), "uninstall" (one with state absent), or the
    helm_release task file it includes ("prepare.yml", "absent.yml"; "controller.yml" is both
    "prepare.yml" and "install", in that order)."""
    found: dict[str, list[str]] = {}
    for tasks in sorted((role / "tasks").glob("*.yml")):
        steps = []
        for task in yaml.safe_load(tasks.read_text()) or []:
            helm = task.get("kubernetes.core.helm")
            if helm is not None:
                steps.append("uninstall" if helm.get("state") == "absent" else "install")
            include = task.get("ansible.builtin.include_role") or {}
            if include.get("name") == "tfjob.kit.helm_release":
                # controller.yml prepares, then installs (a controller's chart: jobset, trainer,
                # kueue).
                uses = include["tasks_from"]
                steps.extend(["prepare.yml", "install"] if uses == "controller.yml" else [uses])
        found[tasks.name] = steps
    return found


def test_every_chart_role_installs_and_uninstalls_through_helm_release() -> None:
    """The roles that install a chart share one way to judge a release (the tfjob.kit.helm_release
    role): before an install, another chart's release of the name is refused and an interrupted
    one repaired; an uninstall removes only the toolkit's release. No role calls Helm's
    uninstall itself, so none can skip the chart check."""
    roles = {}
    for role in ROLES:
        uses = _helm_release_uses(role)
        if any("install" in steps for steps in uses.values()):
            roles[role.name] = uses
    assert set(roles) == {
        "jobset",
        "kube_batch",
        "kueue",
        "nvidia_device_plugin",
        "trainer",
        "training_operator",
        "volcano",
    }
    for name, uses in roles.items():
        steps = [step for file in uses.values() for step in file]
        assert "uninstall" not in steps and "absent.yml" in steps, (name, uses)
        for file, file_steps in uses.items():
            if "install" in file_steps:
                assert "prepare.yml" in file_steps[: file_steps.index("install")], (name, file)


def test_the_roles_read_the_local_clusters_marker_where_up_writes_it() -> None:
    """`tfjob-kit cluster up` writes a marker ConfigMap (cluster/local.py MARKER); the roles that
    behave differently on the local cluster read it by name."""
    from tfjob_kit.cluster.local import MARKER

    readers = []
    for tasks in sorted(ROOT.glob("roles/*/tasks/*.yml")):
        for task in yaml.safe_load(tasks.read_text()) or []:
            # tfjob.kit.objects_info reads it under the key "marker", in the task's queries or
            # in the vars its queries are combined from.
            found = [task.get("tfjob.kit.objects_info") or {}, *(task.get("vars") or {}).values()]
            for queries in found:
                if not isinstance(queries, dict):
                    continue
                if isinstance(queries.get("queries"), dict):
                    queries = queries["queries"]
                marker = queries.get("marker")
                if isinstance(marker, dict):
                    readers.append(tasks.relative_to(ROOT))
                    assert marker.get("kind") == "ConfigMap", tasks
                    assert (marker.get("namespace"), marker.get("name")) == MARKER, tasks
    assert len(readers) >= 2, readers  # the volcano and training_operator roles
