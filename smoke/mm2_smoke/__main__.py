"""Entry point: ``python -m mm2_smoke`` or ``spark-submit .../mm2_smoke/__main__.py``."""

import os
import sys

if __package__ in (None, ""):
    # spark-submit runs this file as a script: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from mm2_smoke.cli import main  # pylint: disable=import-self
else:
    from .cli import main

if __name__ == "__main__":
    sys.exit(main())
