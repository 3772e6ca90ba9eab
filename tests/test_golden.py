"""Every registered env and mode behaves as the golden file recorded it before the problem-contract
refactor (issue 11): first observations, the oracle's and the random agent's episodes, and three
malformed actions, for 50 seeds each (see tests/golden.py; rewrite it only for a change of
behaviour that is meant, and say so in the commit)."""
import contextlib
import json

import pytest

from golden import CASES, PATH, POOLED, record_case
from solvergym.sandbox import SandboxPool

GOLDEN = json.loads(PATH.read_text())


@pytest.mark.parametrize("name, env_id, kwargs", CASES, ids=[c[0] for c in CASES])
def test_env_matches_the_golden_file(name, env_id, kwargs):
    want = GOLDEN[name]
    with (SandboxPool(size=1) if env_id in POOLED else contextlib.nullcontext()) as pool:
        got = record_case(env_id, kwargs, [int(s) for s in want], pool, name)
    for seed, row in want.items():
        assert got[seed] == row, f"{name} seed {seed}"
    assert set(got) == set(want) and len(want) == 50
