"""``python -m trainers.appo [options]``: train APPO on a Doom scenario (same options as ``evaltk train doom``)."""

from __future__ import annotations

import sys

from trainers.appo.cli import main

if __name__ == "__main__":
    sys.exit(main(description=__doc__))
