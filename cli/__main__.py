"""``python -m solvergym.cli`` (and ``accelerate launch -m solvergym.cli``): the ``solvergym`` command."""
import sys

from .main import main

sys.exit(main())
