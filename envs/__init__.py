"""Task families (one sub-package each: generator -> verify -> env) and the shared text-env contract."""
from .base import Instance, Outcome, TextEnv, TextSpace, validate_action

__all__ = ["Instance", "Outcome", "TextEnv", "TextSpace", "validate_action"]
