"""Deprecated: the ready interceptors moved to :mod:`kheaders.interceptors`.

A top-level package named ``interceptors`` may be taken by any other distribution, so the
interceptors live in kheaders now. For one release this package keeps the old paths
working: ``import interceptors.tracing``, ``from interceptors.metrics import ...`` and dotted
names in config (``"interceptor.classes": "interceptors.tracing.TracingProducerInterceptor"``)
give the same objects as ``kheaders.interceptors``, and the first of them in a process warns
with a DeprecationWarning that points at the line asking (the import, or the client built from
the config). Replace ``interceptors.`` with ``kheaders.interceptors.``; the next release
removes this package.
"""

from __future__ import annotations

import sys
import warnings

MESSAGE = (
    "the top-level 'interceptors' package is deprecated and will be removed in the next"
    " release: import 'kheaders.interceptors' instead (and name"
    " 'kheaders.interceptors.<module>.<Class>' in interceptor.classes)"
)


def _asker() -> int:
    """The ``stacklevel`` of the first frame outside the import system, this package and
    kheaders (whose config resolves dotted names): the user's line that asked for the old path.

    ``warnings.warn`` counts ``stacklevel`` over frames that are not importlib's bootstrap
    (it skips those itself), so they are not counted here either.
    """
    level, frame = 1, sys._getframe(1).f_back  # this module's body is stacklevel 1
    while frame is not None:
        name = frame.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):
            level += 1
            top = str(frame.f_globals.get("__name__", "")).partition(".")[0]
            if top not in ("importlib", "interceptors", "kheaders"):
                break
        frame = frame.f_back
    return level


warnings.warn(MESSAGE, DeprecationWarning, stacklevel=_asker())
