# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Connection options shared by the tfjob.kit modules (named as kubernetes.core names them)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig itself as a dictionary.
      - The credentials of a dictionary (the C(users[].user) token, client key data, password,
        auth-provider C(config) and exec C(env) values) are never logged or returned; the rest
        (servers, contexts, names) is shown in the invocation as given.
      - Defaults to E(K8S_AUTH_KUBECONFIG), then E(KUBECONFIG), then C(~/.kube/config), then the
        in-cluster service account.
    type: raw
  context:
    description:
      - The kubeconfig context to use. Defaults to E(K8S_AUTH_CONTEXT), then the current context.
    type: str
  host:
    description:
      - URL of the API server, for example C(https://203.0.113.10:6443).
      - Defaults to E(K8S_AUTH_HOST). Overrides the server of the kubeconfig when both are given.
    type: str
  api_key:
    description:
      - Bearer token for the API server. Defaults to E(K8S_AUTH_API_KEY). Never logged.
    type: str
  validate_certs:
    description:
      - Whether to verify the API server's TLS certificate. Defaults to E(K8S_AUTH_VERIFY_SSL),
        then the kubeconfig.
      - E(K8S_AUTH_VERIFY_SSL) takes the booleans Ansible takes (V(true)/V(false), V(yes)/V(no),
        V(on)/V(off), V(1)/V(0), any case); any other value fails the task rather than turning
        verification off.
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - CA certificate file to verify the API server with. Defaults to E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Client certificate file. Defaults to E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Client key file. Defaults to E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
  proxy:
    description:
      - HTTP proxy URL for the API server. Defaults to E(K8S_AUTH_PROXY).
    type: str
  no_proxy:
    description:
      - Comma-separated hosts reached without the proxy. Defaults to E(K8S_AUTH_NO_PROXY).
    type: str
  impersonate_user:
    description:
      - User to impersonate. Defaults to E(K8S_AUTH_IMPERSONATE_USER).
    type: str
  impersonate_groups:
    description:
      - Groups to impersonate, each sent as an C(Impersonate-Group) header of its own. Defaults
        to E(K8S_AUTH_IMPERSONATE_GROUPS) (comma-separated).
    type: list
    elements: str
requirements:
  - python >= 3.11
  - tfjob-kit (the Python package that ships this collection; it brings the kubernetes client)
notes:
  - The modules run where the task runs (usually C(localhost)) and talk to the API server from
    there; that Python needs the C(tfjob-kit) package.
"""
