# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the tfjob.kit modules share: the connection argument spec, the library import, and
what must never be shown (kubeconfig credentials, secret env values).

All logic lives in the tfjob_kit Python package; the modules only map arguments and results.
"""

from __future__ import annotations

import copy
import traceback
from typing import Any, NoReturn

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    from tfjob_kit import extras, redact
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.connection import Connection
except ImportError:
    LIBRARY_IMPORT_ERROR: str | None = traceback.format_exc()
else:
    LIBRARY_IMPORT_ERROR = None

HIDDEN = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
# What the invocation shows of a definition text with a document that did not load.
UNREADABLE_DEFINITION = (
    "(not shown: a document of this definition could not be loaded, so the secret values it "
    "may hold could not be found)"
)

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


def _definition_secrets(definition: Any) -> tuple[set[str], bool]:
    """The secret env values of O(definition), and whether it is text with a document that did
    not load (whose secrets cannot be known: the text is then not shown)."""
    if definition is None:
        return set(), False
    # Only the modules that take a definition pay for the loader (a third of a second).
    from tfjob_kit.kube.jobs import (
        InvalidInputError,
        input_secret_values,
        load_input,
        unreadable_text,
    )

    try:
        docs = load_input(None, definition)
    except InvalidInputError:
        docs = []
    return input_secret_values(definition, docs), unreadable_text(definition, docs)


class KitModule(AnsibleModule):  # type: ignore[misc]  # ansible ships no type information
    """AnsibleModule that never returns kubeconfig credentials, proxy passwords or secret env
    values.

    A kubeconfig given as a dictionary is not no_log as a whole (its server, context and
    namespace names would then be masked wherever they appear); its credentials are
    (redact.kubeconfig_credentials). The values of secret env entries of O(definition)
    (redact's rule) are masked in the invocation; long ones are no_log values too. Every
    exit, the failures of argument parsing included, goes through here."""

    def _hide(self, result: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = dict(getattr(self, "params", None) or {})
        kubeconfig = params.get("kubeconfig")
        if LIBRARY_IMPORT_ERROR is not None:
            if isinstance(kubeconfig, dict):
                params["kubeconfig"] = HIDDEN
        else:
            self.no_log_values.update(redact.kubeconfig_credentials(kubeconfig))
            self.no_log_values.update(redact.url_passwords(params.get("proxy")))
            secrets, unreadable = _definition_secrets(params.get("definition"))
            self.no_log_values.update(redact.text_values(secrets))
            if unreadable:
                params["definition"] = UNREADABLE_DEFINITION
            elif secrets:
                definition = params["definition"]
                params["definition"] = (
                    redact.mask_all(definition, secrets)
                    if isinstance(definition, str)
                    else redact.mask(definition, secrets)
                )
        result.setdefault("invocation", {"module_args": params})
        return result

    def exit_json(self, **kwargs: Any) -> NoReturn:
        _skip_stackwalk = True  # AnsibleModule skips the frames that set it
        super().exit_json(**self._hide(kwargs))
        raise AssertionError("AnsibleModule.exit_json returned")

    def fail_json(self, msg: str, **kwargs: Any) -> NoReturn:
        _skip_stackwalk = True  # AnsibleModule skips the frames that set it
        super().fail_json(msg, **self._hide(kwargs))
        raise AssertionError("AnsibleModule.fail_json returned")


def require_library(module: AnsibleModule) -> None:
    if LIBRARY_IMPORT_ERROR is not None:
        module.fail_json(
            msg=missing_required_lib(
                "tfjob-kit", reason="the tfjob.kit modules run the tfjob_kit library"
            ),
            exception=LIBRARY_IMPORT_ERROR,
        )
    # The library's own extra for the modules (the cluster's API: kubernetes).
    absent = extras.missing("ansible")
    if absent:
        module.fail_json(
            msg=missing_required_lib(
                " and ".join(absent), reason="the tfjob.kit modules (tfjob-kit[ansible])"
            )
        )


def connection(module: KitModule) -> Connection:
    """The Connection the module's parameters (and K8S_AUTH_*) describe; a bad K8S_AUTH_*
    value fails the task."""
    try:
        return Connection.from_options({k: module.params.get(k) for k in _CONNECTION_SPEC})
    except KubeError as exc:
        module.fail_json(msg=str(exc))
