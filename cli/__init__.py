"""The ``solvergym`` command line (console script ``solvergym.cli:main``; also
``python -m solvergym.cli`` and ``accelerate launch -m solvergym.cli``).

:mod:`.main` builds the parser from one module per command group and dispatches; see it for which
module holds which subcommand. Front end only: the work is done by the library's modules.
"""
from .main import main

__all__ = ["main"]
