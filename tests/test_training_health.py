"""Training metrics that explain a run (issue 25, items 4 and 6): the KL clamp no longer hides a
far reference (both means, and a warning), and the run's plot draws the health metrics."""
from __future__ import annotations

import math

import pytest
import torch

from solvergym.algorithms.kl import KL_CLAMP, kl_estimate, kl_means, warn_if_clamp_hides


def test_both_means_and_the_warning_when_the_clamp_hides_the_kl():
    logp = torch.tensor([[-1.0, -1.0, -1.0, 0.0]], dtype=torch.float64)
    ref = torch.tensor([[-1.0, -1.0, 14.0, 0.0]], dtype=torch.float64)  # one token 15 nats below the reference
    mask = torch.tensor([[1, 1, 1, 0]])
    clamped, unclamped = kl_means(logp, ref, "k3", mask)
    far = math.exp(15.0) - 1.0 - 15.0  # k3 = exp(-x) - 1 + x at x = -15
    assert clamped == pytest.approx(KL_CLAMP / 3) and unclamped == pytest.approx(far / 3)
    assert clamped == pytest.approx(float((kl_estimate(logp, ref, "k3") * mask).sum() / 3))
    with pytest.warns(RuntimeWarning, match="unclamped mean .* over 10x the clamped"):
        assert warn_if_clamp_hides(clamped, unclamped)


def test_no_warning_near_the_reference():
    logp = torch.tensor([[-1.0, -2.0]], dtype=torch.float64)
    clamped, unclamped = kl_means(logp, logp - 0.1, "k3", torch.ones(1, 2))
    assert clamped == unclamped == pytest.approx(math.exp(-0.1) - 1 + 0.1)
    assert not warn_if_clamp_hides(clamped, unclamped) and not warn_if_clamp_hides(0.0, 0.0)


def test_the_run_plot_draws_the_health_metrics(tmp_path):
    import json

    from solvergym.algorithms.plots import health_series, plot_run

    rows = [{"step": i, "reward": 0.1 * i, "reward/correct": 0.1 * i, "accuracy": 0.5, "response_length": 9.0,
             "entropy": 1.2, "kl": 0.01, "kl_unclamped": 0.01 * 10 ** i, "clipped_ratio": 0.25,
             "frac_reward_zero_std": 0.5, **({"filter_dropped": 0.5, "filter_dropped/none_correct": 0.5} if i else {})}
            for i in range(3)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert health_series(rows) == {
        "shares per step": ["frac_reward_zero_std", "filter_dropped", "filter_dropped/none_correct", "clipped_ratio"],
        "entropy and KL": ["entropy", "kl", "kl_unclamped"]}
    assert plot_run(tmp_path).stat().st_size > 10_000


def test_the_run_plot_keeps_the_title_it_is_given(tmp_path, monkeypatch):
    import json

    from matplotlib.figure import Figure

    from solvergym.algorithms.plots import plot_run

    rows = [{"step": i, "reward": 0.1, "accuracy": 0.5, "entropy": 1.0, "kl": 0.0} for i in range(2)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    titles = []
    real = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (titles.append(self._suptitle.get_text()), real(self, *a, **k)))
    plot_run(tmp_path, title="my run")
    plot_run(tmp_path)
    assert titles == ["my run", str(tmp_path)]  # a health panel's name once overwrote it
