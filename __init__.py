"""solvergym: Gymnasium text environments whose rewards a solver has verified.

``import solvergym`` registers every environment id with Gymnasium::

    import gymnasium as gym
    import solvergym  # noqa: F401
    env = gym.make("SolverSAT-v0", n=3, k=5, l=13)
"""
from .sandbox import SandboxConfig, set_default_config

set_default_config(SandboxConfig(hide=(__path__[0],)))  # no sandboxed program sees solvergym's sources
from .registry import ENVS, env_ids, register_all

__version__ = "0.1.0"
__all__ = ["ENVS", "env_ids", "register_all", "__version__"]

register_all()
