"""``python -m likewise``: the ``likewise`` command (what ``torchrun -m likewise ...`` runs)."""

import sys

from likewise.cli import main

sys.exit(main())
