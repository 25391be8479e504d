"""The string-format checks of ``k8s.io/apimachinery/pkg/util/validation`` and their callers.

Each ``is_*`` function returns what its Go namesake returns: a list of messages (empty when the
value is valid), worded exactly as the API server words them, or for the IP/CIDR/domain checks
that build field errors in Go, a list of :class:`FieldError`. Lengths are counted in UTF-8
bytes, as Go's ``len(string)`` counts them.

Also here: the ``ValidateNameFunc`` helpers of ``k8s.io/apimachinery/pkg/api/validation``
(``NameIsDNSSubdomain`` and friends, with the ``generateName`` prefix handling), and the
one-line wrappers of ``pkg/apis/core/validation`` that turn messages into field errors
(``ValidateDNS1123Label``, ``ValidateQualifiedName``, ...).

The checks follow the Kubernetes minor of :mod:`tfjob_kit.podcheck.release`:

* From 1.35 ``IsQualifiedName`` and ``IsValidLabelValue`` are ``content.IsLabelKey`` and
  ``content.IsLabelValue`` (``k8s.io/apimachinery/pkg/api/validate/content``): the same rules,
  worded a little differently (a length "no more than 63 bytes", not "characters", the prefix's
  subdomain length too, and a key of three parts or more called "a valid label key", not "a
  qualified name"). The other checks here keep the wording of ``pkg/util/validation``.
* ``StrictIPCIDRValidation`` is off by default up to 1.35, so the legacy IP fields accept
  leading zeros and IPv4-mapped IPv6 addresses (only unparsable values fail); from 1.36 it is
  on and they refuse both (:func:`is_valid_ip_for_legacy_field`).
* ``RelaxedEnvironmentVariableValidation`` is on in every minor of the window
  (:func:`is_relaxed_env_var_name`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence

from tfjob_kit.podcheck import release
from tfjob_kit.podcheck.field import FieldError, Path, invalid, required

# ---------------------------------------------------------------------------------------------
# Message builders (MaxLenError, RegexError, EmptyError, InclusiveRangeError)


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def content_max_len_error(length: int) -> str:
    """``content.MaxLenError`` (``k8s.io/apimachinery/pkg/api/validate/content``, 1.35 on): the
    length in bytes."""
    return f"must be no more than {length} bytes"


def _label_len_error(length: int) -> str:
    """The MaxLenError of the label-key and label-value checks at the minor followed: 1.34's
    ``validation.MaxLenError``, then ``content.MaxLenError`` (only called for an error: the
    valid strings never ask for the minor)."""
    return content_max_len_error(length) if release.at_least("1.35") else max_len_error(length)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``: the message, then the examples and the regular expression."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"


def byte_len(value: str) -> int:
    """Go's ``len(string)``: the length in UTF-8 bytes."""
    if value.isascii():
        return len(value)
    return len(value.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------------------------
# Formats. Go's regexp ``^...$`` matches the whole text, as ``fullmatch`` does (Python's ``$``
# would also match before a final newline).

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT_CHAR}*)?{_QNAME_CHAR}"
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_MAX_LENGTH = 63
_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)

LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH = 63
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_FMT_UNDERSCORE = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH = 63
_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)

DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT_UNDERSCORE = (
    _DNS1123_LABEL_FMT_UNDERSCORE + "(\\." + _DNS1123_LABEL_FMT_UNDERSCORE + ")*"
)
_DNS1123_SUBDOMAIN_ERR_UNDERSCORE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' "
    "or '.', and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_UNDERSCORE_RE = re.compile(_DNS1123_SUBDOMAIN_FMT_UNDERSCORE)

DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_ERR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
DNS1035_LABEL_MAX_LENGTH = 63
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)

_WILDCARD_DNS1123_SUBDOMAIN_FMT = "\\*\\." + DNS1123_SUBDOMAIN_FMT
_WILDCARD_DNS1123_SUBDOMAIN_ERR = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character"
)
_WILDCARD_DNS1123_SUBDOMAIN_RE = re.compile(_WILDCARD_DNS1123_SUBDOMAIN_FMT)

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_ERR = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'"
)
_C_IDENTIFIER_RE = re.compile(_C_IDENTIFIER_FMT)

_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_ONE_LETTER_RE = re.compile("[a-z]")

_PERCENT_FMT = "[0-9]+%"
_PERCENT_ERR = "a valid percent string must be a numeric string followed by an ending '%'"
_PERCENT_RE = re.compile(_PERCENT_FMT)

_HTTP_HEADER_NAME_FMT = "[-A-Za-z0-9]+"
_HTTP_HEADER_NAME_ERR = "a valid HTTP header must consist of alphanumeric characters or '-'"
_HTTP_HEADER_NAME_RE = re.compile(_HTTP_HEADER_NAME_FMT)

_ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME_ERR = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', "
    "or '.', and must not start with a digit"
)
_ENV_VAR_NAME_RE = re.compile(_ENV_VAR_NAME_FMT)
_RELAXED_ENV_VAR_NAME_ERR = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)
# Printable ASCII (Go's unicode.IsPrint below 0x80: space to '~') other than '='.
_RELAXED_ENV_VAR_BAD_RE = re.compile("[^\x20-\x3c\x3e-\x7e]")

_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_CONFIG_MAP_KEY_RE = re.compile(_CONFIG_MAP_KEY_FMT)

_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH_RE = re.compile(_HTTP_PATH_FMT)


# ---------------------------------------------------------------------------------------------
# Names

_REMEMBERED_MAX = 4096

# The strings each remembered check accepted: a label key, a prefix or a name seen before is not
# checked again (each check is a pure function of its string). A check looks its set up inline
# (a decorator's extra call cost more than the lookup saves); callers in a hot loop may look it
# up themselves before calling (a string in the set is valid: the check would return []). At
# most ``_REMEMBERED_MAX`` strings are kept in each (then forgotten all at once). The sets are
# never rebound, so a module that imported one sees it as it is.
VALID_QUALIFIED_NAMES: set[str] = set()
VALID_LABEL_VALUES: set[str] = set()
VALID_DNS1123_LABELS: set[str] = set()
VALID_DNS1123_SUBDOMAINS: set[str] = set()
VALID_RELAXED_ENV_VAR_NAMES: set[str] = set()
VALID_CONFIG_MAP_KEYS: set[str] = set()
VALID_PORT_NAMES: set[str] = set()


def _remember(valid: set[str], value: str, errs: list[str]) -> list[str]:
    """``errs``, the check's answer for ``value``, which goes into ``valid`` when ``errs`` is
    empty. (A remembered string gets a new empty list each time: callers may change it.)"""
    if not errs:
        if len(valid) >= _REMEMBERED_MAX:
            valid.clear()
        valid.add(value)
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (from 1.35 ``content.IsLabelKey``, worded as the module docstring
    says): an optional DNS subdomain prefix and '/', then a name of at most 63 alphanumerics,
    '-', '_' or '.'."""
    if value in VALID_QUALIFIED_NAMES:
        return []
    return _remember(VALID_QUALIFIED_NAMES, value, _qualified_name_errors(value))


def _qualified_name_errors(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        elif prefix not in VALID_DNS1123_SUBDOMAINS:  # else remembered as valid
            # IsDNS1123Subdomain, from 1.35 content's: its length error worded as the label's
            errs.extend(
                "prefix part " + msg for msg in _dns1123_subdomain_errors(prefix, _label_len_error)
            )
    else:
        what = "a valid label key " if release.at_least("1.35") else "a qualified name "
        return [
            what
            + regex_error(_QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif byte_len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _label_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if _QUALIFIED_NAME_RE.fullmatch(name) is None:
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue`` (from 1.35 ``content.IsLabelValue``: its length in bytes)."""
    if value in VALID_LABEL_VALUES:
        return []
    errs: list[str] = []
    if byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_label_len_error(LABEL_VALUE_MAX_LENGTH))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errs.append(regex_error(_LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return _remember(VALID_LABEL_VALUES, value, errs)


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: a subdomain-shaped value is told it must not contain dots."""
    if value in VALID_DNS1123_LABELS:
        return []
    errs: list[str] = []
    if byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if _DNS1123_LABEL_RE.fullmatch(value) is None:
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None:
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return _remember(VALID_DNS1123_LABELS, value, errs)


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    if value in VALID_DNS1123_SUBDOMAINS:
        return []
    return _remember(
        VALID_DNS1123_SUBDOMAINS, value, _dns1123_subdomain_errors(value, max_len_error)
    )


def _dns1123_subdomain_errors(value: str, too_long: Callable[[int], str]) -> list[str]:
    """The messages of ``IsDNS1123Subdomain``, the length error worded by ``too_long``
    (``validation.MaxLenError`` or, for content's own copy, ``content.MaxLenError``)."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(too_long(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    """``IsDNS1123SubdomainWithUnderscore`` (dnsConfig searches, RelaxedDNSSearchValidation)."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN_UNDERSCORE_RE.fullmatch(value) is None:
        errs.append(
            regex_error(
                _DNS1123_SUBDOMAIN_ERR_UNDERSCORE, _DNS1123_SUBDOMAIN_FMT_UNDERSCORE, "example.com"
            )
        )
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``."""
    errs: list[str] = []
    if byte_len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if _DNS1035_LABEL_RE.fullmatch(value) is None:
        errs.append(regex_error(_DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _WILDCARD_DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(
            regex_error(
                _WILDCARD_DNS1123_SUBDOMAIN_ERR, _WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com"
            )
        )
    return errs


def is_c_identifier(value: str) -> list[str]:
    """``IsCIdentifier``."""
    if _C_IDENTIFIER_RE.fullmatch(value) is None:
        return [regex_error(_C_IDENTIFIER_ERR, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]
    return []


def _has_chdir_prefix(value: str) -> list[str]:
    """``hasChDirPrefix``."""
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    """``IsEnvVarName``: the strict form (not what the window's minors use by default; see
    :func:`is_relaxed_env_var_name`)."""
    errs: list[str] = []
    if _ENV_VAR_NAME_RE.fullmatch(value) is None:
        errs.append(
            regex_error(
                _ENV_VAR_NAME_ERR, _ENV_VAR_NAME_FMT, "my.env-name", "MY_ENV.NAME", "MyEnvName1"
            )
        )
    errs.extend(_has_chdir_prefix(value))
    return errs


def is_relaxed_env_var_name(value: str) -> list[str]:
    """``IsRelaxedEnvVarName``: non-empty, printable ASCII other than '=' (the check every minor
    of the window makes, RelaxedEnvironmentVariableValidation being locked on)."""
    if value in VALID_RELAXED_ENV_VAR_NAMES:
        return []
    errs: list[str] = []
    if not value:
        errs.append("environment variable name " + empty_error())
    if _RELAXED_ENV_VAR_BAD_RE.search(value) is not None:
        errs.append(_RELAXED_ENV_VAR_NAME_ERR)
    return _remember(VALID_RELAXED_ENV_VAR_NAMES, value, errs)


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``."""
    if value in VALID_CONFIG_MAP_KEYS:
        return []
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _CONFIG_MAP_KEY_RE.fullmatch(value) is None:
        errs.append(
            regex_error(
                _CONFIG_MAP_KEY_ERR, _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"
            )
        )
    errs.extend(_has_chdir_prefix(value))
    return _remember(VALID_CONFIG_MAP_KEYS, value, errs)


def is_valid_percent(value: str) -> list[str]:
    """``IsValidPercent``."""
    if _PERCENT_RE.fullmatch(value) is None:
        return [regex_error(_PERCENT_ERR, _PERCENT_FMT, "1%", "93%")]
    return []


def is_http_header_name(value: str) -> list[str]:
    """``IsHTTPHeaderName``."""
    if _HTTP_HEADER_NAME_RE.fullmatch(value) is None:
        return [regex_error(_HTTP_HEADER_NAME_ERR, _HTTP_HEADER_NAME_FMT, "X-Header-Name")]
    return []


# ---------------------------------------------------------------------------------------------
# Numbers

MAX_INT32 = 2**31 - 1


def is_valid_port_num(port: int) -> list[str]:
    """``IsValidPortNum``: 1 to 65535."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_in_range(value: int, lo: int, hi: int) -> list[str]:
    """``IsInRange``."""
    return [] if lo <= value <= hi else [inclusive_range_error(lo, hi)]


def is_valid_group_id(gid: int) -> list[str]:
    """``IsValidGroupID``: 0 to 2^31-1."""
    return [] if 0 <= gid <= MAX_INT32 else [inclusive_range_error(0, MAX_INT32)]


def is_valid_user_id(uid: int) -> list[str]:
    """``IsValidUserID``: 0 to 2^31-1."""
    return [] if 0 <= uid <= MAX_INT32 else [inclusive_range_error(0, MAX_INT32)]


def is_valid_port_name(port: str) -> list[str]:
    """``IsValidPortName``: an IANA service name (at most 15, a letter, no '--', no edge '-')."""
    if port in VALID_PORT_NAMES:
        return []
    errs: list[str] = []
    if byte_len(port) > 15:
        errs.append(max_len_error(15))
    if _PORT_NAME_CHARSET_RE.fullmatch(port) is None:
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if _PORT_NAME_ONE_LETTER_RE.search(port) is None:
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return _remember(VALID_PORT_NAMES, port, errs)


# ---------------------------------------------------------------------------------------------
# Domains (these build field errors in Go)


def is_fully_qualified_name(path: Path, name: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three segments."""
    if not name:
        return [required(path, origin="IsFullyQualifiedName")]
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid(path, name, ",".join(errs), "IsFullyQualifiedName")]
    if len(name.split(".")) < 3:
        detail = "should be a domain with at least three segments separated by dots"
        return [invalid(path, name, detail, "IsFullyQualifiedName")]
    return []


def is_fully_qualified_domain_name(path: Path, name: str) -> list[FieldError]:
    """``IsFullyQualifiedDomainName``: a trailing dot allowed, at least two segments, each a
    DNS-1123 label."""
    origin = "IsFullyQualifiedDomainName"
    if not name:
        return [required(path, origin=origin)]
    name = name.removesuffix(".")
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid(path, name, ",".join(errs), origin)]
    labels = name.split(".")
    if len(labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        return [invalid(path, name, detail, origin)]
    for label in labels:
        errs = is_dns1123_label(label)
        if errs:
            return [invalid(path, label, ",".join(errs), origin)]
    return []


def is_domain_prefixed_path(path: Path, dp_path: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``host/path`` with a DNS subdomain host."""
    origin = "IsDomainPrefixedPath"
    if not dp_path:
        return [required(path, origin=origin)]
    segments = dp_path.split("/", 1)
    if len(segments) != 2 or not segments[0] or not segments[1]:
        detail = 'must be a domain-prefixed path (such as "acme.io/foo")'
        return [invalid(path, dp_path, detail, origin)]
    host, rest = segments
    out = [invalid(path, host, msg, origin) for msg in is_dns1123_subdomain(host)]
    if _HTTP_PATH_RE.fullmatch(rest) is None:
        out.append(invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT), origin))
    return out


# ---------------------------------------------------------------------------------------------
# IP addresses: k8s.io/utils/net.ParseIPSloppy (Go 1.16's net.ParseIP, which reads IPv4 octets
# with leading zeros as decimal) and the checks of ip.go.

_BIG = 0xFFFFFF


def _dtoi(s: str, i: int) -> tuple[int, int, bool]:
    """Decimal digits from ``s[i:]``: (value, index after them, ok)."""
    n = 0
    start = i
    while i < len(s) and "0" <= s[i] <= "9":
        n = n * 10 + ord(s[i]) - 48
        if n >= _BIG:
            return _BIG, i, False
        i += 1
    return n, i, i > start


def _xtoi(s: str, i: int) -> tuple[int, int, bool]:
    """Hexadecimal digits from ``s[i:]``."""
    n = 0
    start = i
    while i < len(s):
        c = s[i]
        if "0" <= c <= "9":
            n = n * 16 + ord(c) - 48
        elif "a" <= c <= "f":
            n = n * 16 + ord(c) - 87
        elif "A" <= c <= "F":
            n = n * 16 + ord(c) - 55
        else:
            break
        if n >= _BIG:
            return 0, i, False
        i += 1
    return n, i, i > start


def _parse_ipv4(s: str, i: int = 0) -> bytes | None:
    out = bytearray(4)
    for k in range(4):
        if i >= len(s):
            return None
        if k > 0:
            if s[i] != ".":
                return None
            i += 1
        n, i, ok = _dtoi(s, i)
        if not ok or n > 0xFF:
            return None
        out[k] = n
    if i != len(s):
        return None
    return bytes(out)


def _parse_ipv6(s: str) -> bytes | None:
    ip = bytearray(16)
    ellipsis = -1
    pos = 0
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis = 0
        pos = 2
        if pos == len(s):
            return bytes(ip)
    i = 0
    while i < 16:
        n, c, ok = _xtoi(s, pos)
        if not ok or n > 0xFFFF:
            return None
        if c < len(s) and s[c] == ".":
            if (ellipsis < 0 and i != 12) or i + 4 > 16:
                return None
            ip4 = _parse_ipv4(s, pos)
            if ip4 is None:
                return None
            ip[i : i + 4] = ip4
            pos = len(s)
            i += 4
            break
        ip[i] = n >> 8
        ip[i + 1] = n & 0xFF
        i += 2
        pos = c
        if pos == len(s):
            break
        if s[pos] != ":" or pos + 1 == len(s):
            return None
        pos += 1
        if s[pos] == ":":
            if ellipsis >= 0:
                return None
            ellipsis = i
            pos += 1
            if pos == len(s):
                break
    if pos != len(s):
        return None
    if i < 16:
        if ellipsis < 0:
            return None
        gap = 16 - i
        ip[ellipsis + gap : 16] = ip[ellipsis:i]
        ip[ellipsis : ellipsis + gap] = bytes(gap)
    elif ellipsis >= 0:
        return None
    return bytes(ip)


_V4_IN_V6_PREFIX = bytes(10) + b"\xff\xff"


def parse_ip_sloppy(value: str) -> bytes | None:
    """``netutils.ParseIPSloppy``: 16 bytes (IPv4 as IPv4-mapped), or None when unparsable."""
    for c in value:
        if c == ".":
            ip4 = _parse_ipv4(value)
            return None if ip4 is None else _V4_IN_V6_PREFIX + ip4
        if c == ":":
            return _parse_ipv6(value)
    return None


def ip_string(ip: bytes) -> str:
    """Go's ``net.IP.String`` of 16 bytes: dotted IPv4 for an IPv4(-mapped) address, otherwise
    RFC 5952 (lower case, the longest run of two or more zero groups as '::')."""
    if ip[:12] == _V4_IN_V6_PREFIX:
        return ".".join(str(b) for b in ip[12:])
    groups = [ip[k] << 8 | ip[k + 1] for k in range(0, 16, 2)]
    best_start, best_len = -1, 1
    k = 0
    while k < 8:
        if groups[k] == 0:
            end = k
            while end < 8 and groups[end] == 0:
                end += 1
            if end - k > best_len:
                best_start, best_len = k, end - k
            k = end
        else:
            k += 1
    if best_start < 0:
        return ":".join(f"{g:x}" for g in groups)
    head = ":".join(f"{g:x}" for g in groups[:best_start])
    tail = ":".join(f"{g:x}" for g in groups[best_start + best_len :])
    return f"{head}::{tail}"


def _parse_ip(
    path: Path, value: str, strict: bool, origin: str
) -> tuple[bytes | None, list[FieldError]]:
    """``parseIP``."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        detail = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        return None, [invalid(path, value, detail, origin)]
    errs: list[FieldError] = []
    if strict:
        try:
            addr: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(value)
        except ValueError:
            addr = None
            errs.append(invalid(path, value, "must not have leading 0s", origin))
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            detail = "must not be an IPv4-mapped IPv6 address"
            errs.append(invalid(path, value, detail, origin))
    return ip, errs


def is_valid_ip_for_legacy_field(
    path: Path, value: str, strict: bool | None = None, valid_old: Sequence[str] = ()
) -> list[FieldError]:
    """``IsValidIPForLegacyField``; ``strict`` None: as core validation's wrapper of the same
    name calls it, strict when StrictIPCIDRValidation is on at the minor followed (1.36 on:
    leading zeros and IPv4-mapped IPv6 addresses fail; before, only an unparsable value)."""
    if value in valid_old:
        return []
    if strict is None:
        strict = release.gate("StrictIPCIDRValidation")
    return _parse_ip(path, value, strict, "format=ip-sloppy")[1]


def is_valid_ip(path: Path, value: str) -> list[FieldError]:
    """``IsValidIP``: strict, and in canonical form."""
    origin = "format=ip-strict"
    ip, errs = _parse_ip(path, value, True, origin)
    if errs or ip is None:
        return errs
    canonical = ip_string(ip)
    if value != canonical:
        detail = f'must be in canonical form ("{canonical}")'
        return [invalid(path, value, detail, origin)]
    return []


# ---------------------------------------------------------------------------------------------
# Name rules (k8s.io/apimachinery/pkg/api/validation ValidateNameFunc): ``(name, prefix)`` ->
# messages, where ``prefix`` says the value is a generateName.

NameRule = Callable[[str, bool], list[str]]


def _mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: a generateName may end in '-'; the server checks it with that dash
    and the character before it replaced by one 'a'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain`` (pods, secrets, config maps, service accounts, ...)."""
    if prefix:
        return is_dns1123_subdomain(_mask_trailing_dash(name))
    if name in VALID_DNS1123_SUBDOMAINS:  # what is_dns1123_subdomain looks up first
        return []
    return is_dns1123_subdomain(name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel`` (namespaces)."""
    if prefix:
        return is_dns1123_label(_mask_trailing_dash(name))
    if name in VALID_DNS1123_LABELS:  # what is_dns1123_label looks up first
        return []
    return is_dns1123_label(name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNS1035Label`` (services)."""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


validate_namespace_name = name_is_dns_label
validate_service_account_name = name_is_dns_subdomain


# ---------------------------------------------------------------------------------------------
# Field-error wrappers of pkg/apis/core/validation and pkg/api/validation


def validate_dns1123_label(value: str, path: Path) -> list[FieldError]:
    """``ValidateDNS1123Label``."""
    if value in VALID_DNS1123_LABELS:  # what is_dns1123_label looks up first
        return []
    return [invalid(path, value, msg, "ValidateDNS1123Label") for msg in is_dns1123_label(value)]


def validate_qualified_name(value: str, path: Path) -> list[FieldError]:
    """``ValidateQualifiedName``."""
    if value in VALID_QUALIFIED_NAMES:  # what is_qualified_name looks up first
        return []
    return [invalid(path, value, msg, "ValidateQualifiedName") for msg in is_qualified_name(value)]


def validate_dns1123_subdomain(value: str, path: Path) -> list[FieldError]:
    """``ValidateDNS1123Subdomain``."""
    if value in VALID_DNS1123_SUBDOMAINS:  # what is_dns1123_subdomain looks up first
        return []
    return [
        invalid(path, value, msg, "ValidateDNS1123Subdomain") for msg in is_dns1123_subdomain(value)
    ]


def validate_dns1123_subdomain_with_underscore(value: str, path: Path) -> list[FieldError]:
    """``ValidateDNS1123SubdomainWithUnderScore``."""
    return [
        invalid(path, value, msg, "ValidateDNS1123SubdomainWithUnderScore")
        for msg in is_dns1123_subdomain_with_underscore(value)
    ]


def validate_nonnegative_field(value: int, path: Path) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    if value < 0:
        return [invalid(path, value, IS_NEGATIVE_ERROR_MSG, "ValidateNonnegativeField")]
    return []


def validate_name(value: str, path: Path, rule: NameRule, origin: str) -> list[FieldError]:
    """Each message of a name rule as an Invalid error (``for _, msg := range nameFn(...)``)."""
    return [invalid(path, value, msg, origin) for msg in rule(value, False)]
