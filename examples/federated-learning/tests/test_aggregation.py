"""Tests for FedAvg in numpy, including agreement with Flower's own aggregation."""

from __future__ import annotations

import numpy as np
import pytest
from flwr.app import ArrayRecord, MetricRecord, RecordDict
from flwr.serverapp.strategy.strategy_utils import aggregate_arrayrecords

from flotilla_fl.aggregation import fedavg


def test_weighted_by_sample_count() -> None:
    a = [np.array([[0.0, 2.0]]), np.array([1.0])]
    b = [np.array([[4.0, 6.0]]), np.array([3.0])]
    out = fedavg([(a, 1), (b, 3)])
    assert np.allclose(out[0], [[3.0, 5.0]])
    assert np.allclose(out[1], [2.5])


def test_single_client_is_identity() -> None:
    a = [np.array([1.0, -2.0])]
    assert np.array_equal(fedavg([(a, 7)])[0], a[0])


def test_zero_weight_client_is_ignored() -> None:
    a = [np.array([1.0])]
    b = [np.array([100.0])]
    assert np.allclose(fedavg([(a, 5), (b, 0)])[0], [1.0])


def test_matches_flower_fedavg() -> None:
    rng = np.random.default_rng(3)
    clients = [([rng.normal(size=(12, 4)), rng.normal(size=4)], n) for n in (600, 150, 420)]
    ours = fedavg(clients)
    records = [
        RecordDict({"arrays": ArrayRecord(list(arrays)),
                    "metrics": MetricRecord({"num-examples": n})})
        for arrays, n in clients
    ]
    theirs = aggregate_arrayrecords(records, "num-examples").to_numpy_ndarrays()
    assert len(theirs) == len(ours)
    for mine, flower in zip(ours, theirs, strict=True):
        assert np.allclose(mine, flower)


def test_rejects_mismatched_shapes_and_empty_input() -> None:
    with pytest.raises(ValueError, match="same count and shapes"):
        fedavg([([np.zeros(2)], 1), ([np.zeros(3)], 1)])
    with pytest.raises(ValueError, match="at least one"):
        fedavg([])
    with pytest.raises(ValueError, match="sample counts"):
        fedavg([([np.zeros(2)], 0)])
