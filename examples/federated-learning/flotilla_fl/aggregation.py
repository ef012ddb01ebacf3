"""Federated averaging (FedAvg) of parameter lists, weighted by each client's sample count.

The ServerApp uses Flower's own FedAvg strategy; this function is the same rule in plain numpy,
used by compare.py's in-process simulation and checked against Flower's implementation in the
tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flotilla_fl.model import FloatArray


def fedavg(results: Sequence[tuple[Sequence[FloatArray], int]]) -> list[FloatArray]:
    """Average each array position over clients, weighting client i by its sample count n_i."""
    if not results:
        raise ValueError("fedavg needs at least one client result")
    total = sum(n for _, n in results)
    if total <= 0 or any(n < 0 for _, n in results):
        counts = [n for _, n in results]
        raise ValueError(f"sample counts must be >= 0 and sum to > 0, got {counts}")
    first = results[0][0]
    for arrays, _ in results[1:]:
        if len(arrays) != len(first) or any(
            a.shape != b.shape for a, b in zip(arrays, first, strict=True)
        ):
            raise ValueError("all clients must send arrays of the same count and shapes")
    out: list[FloatArray] = []
    for pos in range(len(first)):
        acc = np.zeros_like(first[pos], dtype=np.float64)
        for arrays, n in results:
            acc += (n / total) * np.asarray(arrays[pos], dtype=np.float64)
        out.append(acc)
    return out
