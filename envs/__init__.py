"""The environments: the problem contract (:mod:`.problem`, :mod:`.capabilities`), the modes built
once on it (:mod:`.modes`), the services they use (:mod:`.equivalence`), one sub-package per task
family (generator -> verify -> problem), and the shared data types (:mod:`.instance`, :mod:`.text`,
:mod:`.parsing`)."""
from .instance import Instance
from .text import TextSpace, validate_action

__all__ = ["Instance", "TextSpace", "validate_action"]
