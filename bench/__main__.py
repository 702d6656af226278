"""``python -m bench``: run the benchmark suite (see ``--help``)."""

from __future__ import annotations

from bench._runner import main

raise SystemExit(main())
