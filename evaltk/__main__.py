"""``python -m evaltk`` runs the ``evaltk`` command."""

import sys

from evaltk.cli.main import main

sys.exit(main())
