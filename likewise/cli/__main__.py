"""``python -m likewise.cli``: the ``likewise`` command."""

import sys

from likewise.cli import main

sys.exit(main())
