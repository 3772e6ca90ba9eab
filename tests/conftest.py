import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "solvergym",
    deadline=None,  # solver calls vary in time; correctness is what these tests check
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("solvergym")
