"""The two penalties of Lacroix et al. (2020): N3 on the factors of each training quadruple,
and a smoothness penalty that keeps neighbouring years' embeddings close."""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor

from chronoprobe.tkg.models import TKGModel, modulus


def n3(factors: Sequence[Tensor], weight: float) -> Tensor:
    """weight * sum of cubed factor moduli, averaged over the batch (the nuclear 3-norm bound)."""
    total = sum(f.abs().pow(3).sum() for f in factors)
    return weight * total / factors[0].shape[0]


def temporal_smoothness(times: Tensor, weight: float) -> Tensor:
    """weight * mean over consecutive years of |w_{t+1} - w_t|^3 (complex moduli, 'Lambda3')."""
    if times.shape[0] < 2:
        return times.new_zeros(())
    steps = modulus(times[1:] - times[:-1])
    return weight * steps.pow(3).sum() / (times.shape[0] - 1)


def penalty(
    model: TKGModel, s: Tensor, r: Tensor, o: Tensor, t: Tensor, n3_weight: float, smooth: float
) -> Tensor:
    """Both penalties for one batch of quadruples; the smoothness term only for temporal models."""
    total = n3(model.factors(s, r, o, t), n3_weight)
    times = model.time_table()
    if times is not None and smooth:
        total = total + temporal_smoothness(times, smooth)
    return total
