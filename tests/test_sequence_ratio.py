"""Spring eq. 2's sequence ratio far from 1 keeps its gradient's sign (issue 25, item 2).

Past log-ratio 20 the ratio continues as its tangent line instead of being clamped: a clamp gave
a gradient of exactly 0 at log-ratio 21, where eq. 2 (A < 0, no dual clip: the unclipped term
decides) gives -A exp(21) = 1.3e9 |A|.
"""
from __future__ import annotations

import math

import pytest
import torch

from solvergym.algorithms.losses import MAX_SEQUENCE_LOG_RATIO, bounded_ratio, sequence_clipped_surrogate


def _grad(log_ratio: float, advantage: float, dtype=torch.float64, **kw) -> tuple[float, float]:
    """The loss of a 1-token sequence and its gradient with respect to the log-ratio."""
    x = torch.tensor([[log_ratio]], dtype=dtype, requires_grad=True)
    loss, _ = sequence_clipped_surrogate(x, torch.zeros_like(x), torch.tensor([[advantage]], dtype=dtype),
                                         torch.ones_like(x), eps_low=0.2, eps_high=0.2, **kw)
    loss.sum().backward()
    return loss.item(), x.grad.item()


@pytest.mark.parametrize("x", [19.0, 21.0, 25.0])
def test_a_negative_advantage_keeps_eq_2s_gradient_sign(x):
    loss, grad = _grad(x, -1.0)
    # eq. 2 with A = -1: l = -min(rho A, clip(rho) A) = rho, dl/dx = rho = exp(x) > 0
    assert grad > 0 and math.isfinite(grad) and loss > 0
    if x < MAX_SEQUENCE_LOG_RATIO:
        assert grad == pytest.approx(math.exp(x)) and loss == pytest.approx(math.exp(x))
    else:  # bounded: the tangent's slope
        assert grad == pytest.approx(math.exp(MAX_SEQUENCE_LOG_RATIO))
        assert loss == pytest.approx(math.exp(MAX_SEQUENCE_LOG_RATIO) * (1 + x - MAX_SEQUENCE_LOG_RATIO))


@pytest.mark.parametrize("x", [19.0, 21.0, 25.0])
def test_where_eq_2_clips_the_gradient_is_zero(x):
    assert _grad(x, 1.0)[1] == 0.0  # A > 0: clip(rho, 1 - d, 1 + d) A decides
    assert _grad(x, -1.0, dual_clip=10.0) == (10.0, 0.0)  # the dual clip's bound -c A


def test_no_overflow_in_float32_and_the_low_side_is_exact():
    loss, grad = _grad(1000.0, -1.0, dtype=torch.float32)
    assert math.isfinite(loss) and math.isfinite(grad) and grad > 0
    loss, grad = _grad(-25.0, 1.0)  # A > 0, rho << 1 - d: the unclipped term, -A rho
    assert grad == pytest.approx(-math.exp(-25.0)) and loss == pytest.approx(-math.exp(-25.0))
    x = torch.linspace(-30, 20, 11, dtype=torch.float64)
    assert torch.allclose(bounded_ratio(x), torch.exp(x))
