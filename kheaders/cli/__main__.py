"""``python -m kheaders.cli``: the ``kheaders`` command."""

import sys

from kheaders.cli import main

sys.exit(main())
