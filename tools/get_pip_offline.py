"""Stand-in for the get-pip.py bootstrap script that ansible-test downloads.

ansible-test fetches get-pip.py from ci-files.testing.ansible.com, which this project's machines
cannot reach. It looks for the script in ~/.ansible/test/cache/get_pip_<version>.py first, so
tools/sanity.py puts this file there. Like get-pip.py, it installs pip and then runs
`pip install` with the arguments it was given; PyPI is reachable. It takes pip from the
interpreter's bundled ensurepip wheel.

ansible-test passes only a few environment variables to its commands, so pip would lose the
machine's CA bundle (PIP_CERT). The script records the bundle in the virtual environment's own
pip.conf, which every later pip call in that environment reads.
"""

from __future__ import annotations

import ensurepip
import os
import subprocess
import sys
from pathlib import Path

_BUNDLES = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
_DEBIAN_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def _ca_bundle() -> str | None:
    for name in _BUNDLES:
        if os.environ.get(name):
            return os.environ[name]
    return _DEBIAN_BUNDLE if Path(_DEBIAN_BUNDLE).is_file() else None


if __name__ == "__main__":
    bundle = _ca_bundle()
    if bundle and sys.prefix != sys.base_prefix:
        Path(sys.prefix, "pip.conf").write_text(f"[global]\ncert = {bundle}\n")
    ensurepip.bootstrap(upgrade=True)
    os.environ.pop("PIP_CONFIG_FILE", None)  # ensurepip leaves it at /dev/null
    # --no-setuptools / --no-wheel are get-pip's own options; pip has no such options.
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--upgrade", *args]))
