import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "solvergym",
    deadline=None,  # solver calls vary in time; correctness is what these tests check
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("solvergym")


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of 2 CPUs for one test module (the sandbox's Ray executor)."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=100 << 20)
    yield ray
    ray.shutdown()


def executor_pool_fixture(request, size: int):
    """A started pool of ``size`` servers on the executor ``request.param`` names, for the
    hostile-program tests parametrised over executors (closed by the caller)."""
    from solvergym.sandbox import SandboxPool
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return SandboxPool(size, executor=request.param).start()
