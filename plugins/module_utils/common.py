# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the tfjob.kit modules share: the connection argument spec and the library import.

All logic lives in the tfjob_kit Python package; the modules only map arguments and results.
"""

from __future__ import annotations

import copy
import traceback
from typing import Any

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    from tfjob_kit.kube.connection import Connection
except ImportError:
    LIBRARY_IMPORT_ERROR: str | None = traceback.format_exc()
else:
    LIBRARY_IMPORT_ERROR = None

_CONNECTION_SPEC: dict[str, dict[str, Any]] = {
    "kubeconfig": {"type": "raw"},
    "context": {"type": "str"},
    "host": {"type": "str"},
    "api_key": {"type": "str", "no_log": True},
    "validate_certs": {"type": "bool", "aliases": ["verify_ssl"]},
    "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"]},
    "client_cert": {"type": "path", "aliases": ["cert_file"]},
    "client_key": {"type": "path", "aliases": ["key_file"], "no_log": False},
    "proxy": {"type": "str"},
    "no_proxy": {"type": "str"},
    "impersonate_user": {"type": "str"},
    "impersonate_groups": {"type": "list", "elements": "str"},
}


def connection_spec() -> dict[str, dict[str, Any]]:
    """The connection options, to merge into a module's argument spec."""
    return copy.deepcopy(_CONNECTION_SPEC)


def require_library(module: AnsibleModule) -> None:
    if LIBRARY_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib(
            "tfjob-kit", reason="the tfjob.kit modules run the tfjob_kit library"),
            exception=LIBRARY_IMPORT_ERROR)


def connection(module: AnsibleModule) -> Connection:
    """The Connection the module's parameters (and K8S_AUTH_*) describe."""
    return Connection.from_options({k: module.params.get(k) for k in _CONNECTION_SPEC})
