#!/usr/bin/env sh
# Audit the installed dependency set for known vulnerabilities (PyPI's advisory service).
# Exit status: 0 = nothing known found (or nothing could be audited: read the report),
# 1 = a vulnerability was found. Where the service is unreachable, pip-audit reports
# "Dependency not found on PyPI and could not be audited" for each package.
set -eu
PYTHON="${PYTHON:-python}"
exec "$PYTHON" -m pip_audit --local --progress-spinner off --desc on "$@"
