"""What tfjob-kit never prints: values of environment variables whose names say they are secret,
and the credentials of a kubeconfig.

The rule for environment variables (``env[]`` entries of any container, TFJob or Volcano Job):
an entry is secret when its name, read case-insensitively,

* contains PASSWORD, PASSWD, PASSPHRASE, SECRET, CREDENTIAL, PRIVATE or CONNECTION STRING
  (separators aside) anywhere, or
* has a word (split at ``_``, ``-``, ``.``, digits and lowerUpper case changes) that is PASS, PWD,
  AUTH, OAUTH, AUTHORIZATION, BEARER, CREDS, JWT, COOKIE, SALT, DSN, PAT or KEYTAB, or that ends
  in TOKEN(S) or KEY(S), or
* has a word URL or URI (or URLS, URIS) and a word that names a data store or broker (DATABASE,
  DB, a word ending in DB, MONGO, REDIS, POSTGRES, POSTGRESQL, PG, MYSQL, MARIADB, AMQP,
  RABBITMQ, BROKER, CELERY, KAFKA, ELASTICSEARCH).

So ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``, ``HF_TOKEN``, ``apiKey``, ``WANDB_API_KEY``,
``BASIC_AUTH``, ``DATABASE_URL``, ``MONGODB_URI``, ``SENTRY_DSN`` and ``GITHUB_PAT`` are secret;
``TOKENIZERS_PARALLELISM``, ``KEYSPACE``, ``AUTHOR``, ``PASSES`` and ``MODEL_URL`` are not.
Certificates are public and not masked by name (a private key's name says KEY). Whatever the
name, a password in a URL (``scheme://user:password@host``) is masked in every value and text.

A secret entry's ``value`` is shown as ``********`` in returned objects, diffs and findings.
In free text (finding and error messages) every occurrence of a secret value of at least
MIN_TEXT_LENGTH characters is replaced; shorter values (``true``, ``1``) would hide unrelated text
and are no secrets, except in the message of a finding located in an env entry, where every
secret value is replaced. Entries with ``valueFrom`` carry no value; that is the way to pass
secrets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

MASK = "********"
# kubectl's copy of the object it last applied, as JSON, in this annotation.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MIN_TEXT_LENGTH = 6

_ANYWHERE = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "CREDENTIAL", "PRIVATE")
_ANYWHERE_JOINED = ("CONNECTIONSTRING",)  # looked for with the separators taken out
_WORDS = frozenset(
    {"PASS", "PWD", "AUTH", "OAUTH", "AUTHORIZATION", "BEARER", "CREDS", "JWT", "COOKIE", "SALT"}
    | {"DSN", "PAT", "KEYTAB"}
)
_WORD_ENDINGS = ("TOKEN", "TOKENS", "KEY", "KEYS")
_LOCATORS = frozenset({"URL", "URI", "URLS", "URIS"})
_STORES = frozenset(
    {"DATABASE", "DB", "MONGO", "REDIS", "POSTGRES", "POSTGRESQL", "PG", "MYSQL", "MARIADB"}
    | {"AMQP", "RABBITMQ", "BROKER", "CELERY", "KAFKA", "ELASTICSEARCH"}
)
_SEPARATORS = re.compile(r"[_\-.\s]")
# A password in a URL's userinfo (scheme://user:password@), each part bounded: linear search.
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/:@]{0,256}:)[^\s/@]{1,256}(?=@)")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
# kubeconfig users[].user fields that are not credentials
_USER_PUBLIC = frozenset(
    {
        "client-certificate",
        "client-certificate-data",
        "client-key",
        "tokenFile",
        "as",
        "as-groups",
        "as-uid",
        "as-user-extra",
        "username",
        "extensions",
    }
)


def is_secret_name(name: object) -> bool:
    """Whether an environment variable of this name holds a secret (the module docstring's rule)."""
    if not isinstance(name, str):
        return False
    upper = name.upper()
    for part in _ANYWHERE:  # a loop makes no generator, as any() does
        if part in upper:
            return True
    joined = _SEPARATORS.sub("", upper)
    if any(part in joined for part in _ANYWHERE_JOINED):
        return True
    words = [word.upper() for word in _WORD.findall(name)]
    for word in words:
        if word in _WORDS or word.endswith(_WORD_ENDINGS):
            return True
    return any(w in _LOCATORS for w in words) and any(
        w in _STORES or (w.endswith("DB") and len(w) > 2) for w in words
    )


_NESTED = (dict, list)


def _walk_env(value: Any) -> Iterable[dict[str, Any]]:
    """Every env entry (a dict in a list under an ``env`` key) anywhere in value."""
    stack = [value]
    while stack:
        node = stack.pop()
        # Only mappings and lists are stacked (scalars hold no env): the same order as stacking
        # every value, without the pushes and pops of the scalars.
        if isinstance(node, dict):
            for key, child in node.items():
                if isinstance(child, _NESTED):
                    if key == "env" and isinstance(child, list):
                        yield from [e for e in child if isinstance(e, dict)]
                    stack.append(child)
        elif isinstance(node, list):
            for child in node:
                if isinstance(child, _NESTED):
                    stack.append(child)


def _is_secret_entry(entry: dict[str, Any]) -> bool:
    return "value" in entry and is_secret_name(entry.get("name"))


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def secret_values(*objects: Any) -> set[str]:
    """The values of secret env entries in the objects, as text (empty ones left out). A value
    that is a mapping or a list (the schema refuses it, and its findings quote it) counts by
    each of its strings and numbers, whatever the format that prints it."""
    found: set[str] = set()
    for obj in objects:
        for entry in _walk_env(obj):
            if not _is_secret_entry(entry) or entry["value"] in (None, ""):
                continue
            value = entry["value"]
            if isinstance(value, dict | list):
                found.update(_leaves(value))
            else:
                found.add(_as_text(value))
    return found


def text_values(values: Iterable[str]) -> list[str]:
    """The values worth searching for in free text, longest first."""
    return sorted((v for v in set(values) if len(v) >= MIN_TEXT_LENGTH), key=len, reverse=True)


def _replace(text: str, ordered: Iterable[str]) -> str:
    """text with each of the values (longest first) replaced by MASK, and every password in a
    URL's userinfo."""
    for value in ordered:
        text = text.replace(value, MASK)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: m[1] + MASK, text)
    return text


def mask_text(text: str, values: Iterable[str]) -> str:
    return _replace(text, text_values(values))


def mask_message(message: str, path: str, values: Iterable[str]) -> str:
    """A finding's message with secret values masked: every one in a finding located in an
    env entry (whatever its length: the message is about that value), long ones elsewhere."""
    return mask_all(message, values) if ".env[" in path else mask_text(message, values)


def mask_all(text: str, values: Iterable[str]) -> str:
    """text with every secret value masked, whatever its length."""
    return _replace(text, sorted(set(values), key=len, reverse=True))


def mask(value: Any, values: Iterable[str] = ()) -> Any:
    """A copy of value (any JSON-like data) with every secret env entry's value masked and the
    given secret values masked in every string."""
    searched = text_values(values)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items()}
            env = out.get("env")
            if isinstance(env, list):
                out["env"] = [
                    {**e, "value": MASK}
                    if isinstance(e, dict) and _is_secret_entry(e) and e["value"] not in (None, "")
                    else e
                    for e in env
                ]
            if isinstance(node.get(LAST_APPLIED), str):
                out[LAST_APPLIED] = _mask_embedded(node[LAST_APPLIED], walk)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str):
            return _replace(node, searched)
        return node

    return walk(value)


def _mask_embedded(text: str, walk: Callable[[Any], Any]) -> str:
    """An object kept as JSON text (kubectl's last-applied configuration), masked as data: it
    holds the values of earlier applies, which no secret value given now finds, and its JSON
    escapes would hide a value that is. Text that is not JSON of a mapping is masked whole."""
    try:
        masked = walk(json.loads(text))
    except (ValueError, RecursionError):
        return MASK
    if not isinstance(masked, dict):
        return MASK
    return json.dumps(masked, separators=(",", ":")) + ("\n" if text.endswith("\n") else "")


def url_passwords(text: Any) -> set[str]:
    """The passwords in the URLs of a text (``scheme://user:password@host``)."""
    if not isinstance(text, str) or "://" not in text:
        return set()
    return {m[0][len(m[1]) :] for m in _URL_PASSWORD.finditer(text)}


def kubeconfig_credentials(kubeconfig: Any) -> set[str]:
    """The credentials of a kubeconfig given as a dict, from ``users[].user``: token,
    client-key-data, password and any other field that is not public (certificate, impersonation,
    user name, file paths), the ``config`` values of an auth-provider and the ``env`` values of
    an exec plugin (not its command or arguments); and the password of a cluster's
    ``proxy-url``."""
    found: set[str] = set()
    if not isinstance(kubeconfig, dict):
        return found
    clusters = kubeconfig.get("clusters")
    for entry in clusters if isinstance(clusters, list) else []:
        cluster = entry.get("cluster") if isinstance(entry, dict) else None
        if isinstance(cluster, dict):
            found.update(url_passwords(cluster.get("proxy-url")))
    users = kubeconfig.get("users")
    for entry in users if isinstance(users, list) else []:
        user = entry.get("user") if isinstance(entry, dict) else None
        if not isinstance(user, dict):
            continue
        for key, value in user.items():
            if key == "auth-provider" and isinstance(value, dict):
                found.update(_leaves(value.get("config")))
            elif key == "exec" and isinstance(value, dict):
                env = value.get("env")
                found.update(
                    _leaves(
                        [e.get("value") for e in env if isinstance(e, dict)]
                        if isinstance(env, list)
                        else []
                    )
                )
            elif key not in _USER_PUBLIC:
                found.update(_leaves(value))
    return found


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for child in value.values():
            yield from _leaves(child)
    elif isinstance(value, list):
        for child in value:
            yield from _leaves(child)
    elif isinstance(value, str | int | float) and not isinstance(value, bool) and value != "":
        yield str(value)
