"""``python -m advect``: the command line for saved programs (see :mod:`advect.cli`)."""

import sys

from .cli import main

sys.exit(main())
