"""`python -m playground.cli`: the same as `bully-tui` (playground/__main__.py takes the
signals over first)."""

import sys

from playground.__main__ import main

sys.exit(main())
