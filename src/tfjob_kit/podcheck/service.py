"""``ValidateServiceCreate`` (pkg/apis/core/validation, Kubernetes v1.34) for the headless Services
the training-operator creates (``operator_objects.operator_services``), after the server's
defaults (``SetDefaults_Service``).

The operator fixes every field of its Services but the name, the labels (and the selector, the
same labels) and the ports: ``clusterIP: None``, the type ``ClusterIP``, no session affinity,
external IPs, node ports or load balancer fields. So the checks below are those of the metadata,
the selector and the ports; a field the operator never sets is taken at its default and its
checks, which pass, are left out.
"""

from __future__ import annotations

from typing import Any

from tfjob_kit.podcheck import meta as podmeta
from tfjob_kit.podcheck import names, release
from tfjob_kit.podcheck.field import FieldError, Path, duplicate, invalid, not_supported, required
from tfjob_kit.podcheck.fields import as_dict

SUPPORTED_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sets.List(supportedPortProtocols)
_ORIGIN = "validation.validateService"


def _defaulted_ports(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """``SetDefaults_ServicePort`` on each port: protocol TCP, targetPort the port."""
    ports = []
    for port in spec.get("ports") or []:
        port = dict(port) if isinstance(port, dict) else {}
        port.setdefault("protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port", 0)
        ports.append(port)
    return ports


def _port_errors(
    port: dict[str, Any], require_name: bool, seen_names: set[str], path: Path
) -> list[FieldError]:
    """``validateServicePort``: the name (required when the Service has several ports, a
    DNS-1123 label, unique), the number, the protocol (the target port is the number)."""
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required((*path, "name"), origin="validation.validateServicePort"))
    elif name:
        errs.extend(names.validate_dns1123_label(name, (*path, "name")))
        if name in seen_names:
            errs.append(duplicate((*path, "name"), name, "validation.validateServicePort"))
        seen_names.add(name)
    number = port.get("port", 0)
    errs.extend(
        invalid((*path, "port"), number, msg, "validation.validateServicePort")
        for msg in names.is_valid_port_num(number)
    )
    protocol = port.get("protocol")
    if protocol not in SUPPORTED_PROTOCOLS:
        errs.append(
            not_supported(
                (*path, "protocol"), protocol, SUPPORTED_PROTOCOLS, "validation.validateServicePort"
            )
        )
    return errs


def _port_key(port: dict[str, Any]) -> dict[str, Any]:
    """The internal ``core.ServicePort{Protocol, Port}`` the duplicate check compares, as
    ``json.Marshal`` prints it in the error (no JSON tags: Go's field names)."""
    return {
        "Name": "",
        "Protocol": port.get("protocol"),
        "AppProtocol": None,
        "Port": port.get("port", 0),
        "TargetPort": 0,
        "NodePort": 0,
    }


def validate_service(service: dict[str, Any]) -> list[FieldError]:
    """The server's field errors for creating `service` (namespaced, named), in Go's order."""
    # RelaxedServiceNameValidation (on from 1.36): a DNS label, a leading digit allowed
    relaxed = release.gate("RelaxedServiceNameValidation")
    errs = podmeta.validate_object_meta(
        service.get("metadata"),
        ("metadata",),
        name_rule=names.name_is_dns_label if relaxed else names.name_is_dns1035_label,
        kube_finalizers=True,
    )
    spec = as_dict(service.get("spec"))
    ports = _defaulted_ports(spec)
    seen_names: set[str] = set()
    for i, port in enumerate(ports):
        errs.extend(_port_errors(port, len(ports) > 1, seen_names, ("spec", "ports", i)))
    selector = spec.get("selector")
    if selector:
        errs.extend(podmeta.validate_labels(selector, ("spec", "selector")))
    seen_keys: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port", 0))
        if key in seen_keys:
            errs.append(duplicate(("spec", "ports", i), _port_key(port), _ORIGIN))
        seen_keys.add(key)
    return errs
