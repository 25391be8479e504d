"""Safe loading of Kubernetes manifests: files, directories, standard input, text.

Every way a YAML document can go wrong ends in a :class:`LoadError` that says where (document
number, line and column) and why, in bounded time and memory:

* syntax errors, tabs used for indentation, and non-UTF-8 input;
* duplicate mapping keys (Kubernetes would keep one silently);
* tags other than the standard ones (no object construction, ever);
* alias bombs: the expanded size of every document is bounded;
* deep nesting and huge documents (an object over ~1.5 MiB cannot be stored in etcd anyway);
  neither parser is given a text nested deeper than it can take without running out of stack;
* keys that are not strings and values JSON cannot carry (NaN, numbers beyond a 64-bit float);
* pathological scalars (long runs of digits, ``_``, ``:``): every check is linear in the input.

Scalars resolve as Kubernetes resolves them (YAML 1.1, like go-yaml: ``0644`` is 420 and ``yes`` is
true), except that timestamps stay strings. Documents that use nothing YAML 1.1 and 1.2 disagree on
are parsed by the fast ``yaml_rs`` parser; everything else goes through PyYAML with the checks
above. Both paths give the same result; a property test holds them to it.

The modules, one job each:

* :mod:`.documents`: Document, LoadError, Limits, InputError: what loading produces;
* :mod:`.sources`: files, directories and standard input into texts;
* :mod:`.split`: a text into its documents;
* :mod:`.loader`: :func:`load_text`, the fast parser where the gate allows it, else the careful one;
* :mod:`.gate`: **the rule** for which texts the fast parser may read, in one place;
* :mod:`.fast`: the fast parser (yaml_rs);
* :mod:`.careful`: the careful parser (PyYAML, YAML 1.1, every cost bounded and located);
* :mod:`.checks`: what every parsed document must be (a mapping JSON can carry);
* :mod:`.numbers`: which numbers Kubernetes can carry, and reading YAML 1.1 numbers linearly.
"""

from tfjob_kit.manifests.checks import unsendable
from tfjob_kit.manifests.documents import (
    DEFAULT_LIMITS,
    Document,
    InputError,
    Limits,
    LoadError,
    shorten,
)
from tfjob_kit.manifests.loader import load_text
from tfjob_kit.manifests.numbers import MAX_NUMBER, out_of_range_message
from tfjob_kit.manifests.sources import (
    MANIFEST_SUFFIXES,
    expand_paths,
    load_path,
    load_paths,
    read_source,
)

__all__ = [
    "DEFAULT_LIMITS",
    "MANIFEST_SUFFIXES",
    "MAX_NUMBER",
    "Document",
    "InputError",
    "Limits",
    "LoadError",
    "expand_paths",
    "load_path",
    "load_paths",
    "load_text",
    "out_of_range_message",
    "read_source",
    "shorten",
    "unsendable",
]
