"""How to reach the cluster: the options kubernetes.core uses, from arguments or K8S_AUTH_*.

Precedence: an explicit option, then its K8S_AUTH_* environment variable, then the kubeconfig
(``KUBECONFIG`` or ``~/.kube/config``), then the in-cluster service account.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.kube.api_errors import KubeError

# option name -> environment variable, as kubernetes.core names them
ENVIRONMENT = {
    "kubeconfig": "K8S_AUTH_KUBECONFIG",
    "context": "K8S_AUTH_CONTEXT",
    "host": "K8S_AUTH_HOST",
    "api_key": "K8S_AUTH_API_KEY",
    "validate_certs": "K8S_AUTH_VERIFY_SSL",
    "ca_cert": "K8S_AUTH_SSL_CA_CERT",
    "client_cert": "K8S_AUTH_CERT_FILE",
    "client_key": "K8S_AUTH_KEY_FILE",
    "proxy": "K8S_AUTH_PROXY",
    "no_proxy": "K8S_AUTH_NO_PROXY",
    "impersonate_user": "K8S_AUTH_IMPERSONATE_USER",
    "impersonate_groups": "K8S_AUTH_IMPERSONATE_GROUPS",
}
# The booleans Ansible accepts, case-insensitive; anything else is an error, never "off".
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


def parse_bool(raw: str, variable: str) -> bool | None:
    """An environment boolean: None when empty (unset), else true or false; any other value
    raises KubeError, so that a typo never turns TLS verification off."""
    word = raw.strip().lower()
    if not word:
        return None
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise KubeError(
        f"{variable}={raw!r} is not a boolean: use true or false (also yes/no, on/off, 1/0)",
        "config",
    )


@dataclass
class Connection:
    kubeconfig: str | dict[str, Any] | None = None
    context: str | None = None
    host: str | None = None
    api_key: str | None = field(default=None, repr=False)
    validate_certs: bool | None = None
    ca_cert: str | None = None
    client_cert: str | None = None
    client_key: str | None = None
    proxy: str | None = None
    no_proxy: str | None = None
    impersonate_user: str | None = None
    impersonate_groups: list[str] = field(default_factory=list)

    @classmethod
    def from_options(
        cls, options: dict[str, Any], environ: dict[str, str] | None = None
    ) -> Connection:
        """Options (None = unset) completed from the K8S_AUTH_* environment. Raises KubeError
        for a K8S_AUTH_VERIFY_SSL that is not a boolean."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        # Explicit host or api_key options mean "this server, this token": a kubeconfig from
        # the environment would add its own user and credentials.
        explicit_server = bool(options.get("host") or options.get("api_key"))
        for spec in fields(cls):
            value = options.get(spec.name)
            if spec.name == "kubeconfig" and explicit_server and not value:
                continue
            if value in (None, [], "") and ENVIRONMENT[spec.name] in env:
                raw = env[ENVIRONMENT[spec.name]]
                if spec.name == "validate_certs":
                    value = parse_bool(raw, ENVIRONMENT[spec.name])
                elif spec.name == "impersonate_groups":
                    value = [g.strip() for g in raw.split(",") if g.strip()]
                else:
                    value = raw
            if value not in (None, ""):
                values[spec.name] = value
        return cls(**values)

    def namespace(self) -> str | None:
        """The namespace of the kubeconfig's selected context, if it names one."""
        if self.host and not self.kubeconfig:
            return None
        data: Any = self.kubeconfig
        if not isinstance(data, dict):
            path = Path(
                str(self.kubeconfig or "")
                or os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]
            ).expanduser()
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                return None
        if not isinstance(data, dict):
            return None
        wanted = self.context or data.get("current-context")
        for entry in data.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") == wanted:
                value = (entry.get("context") or {}).get("namespace")
                return str(value) if value else None
        return None
