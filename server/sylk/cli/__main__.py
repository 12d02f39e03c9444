"""``python -m sylk.cli``: the ``sylk`` command."""

import sys

from . import main

sys.exit(main())
