"""Tests for the ServerApp's FedAvg wrapper: it aggregates like FedAvg and records who took part."""

from __future__ import annotations

import time
from typing import Any, cast

import numpy as np
from flwr.app import (
    ArrayRecord,
    ConfigRecord,
    Message,
    MessageType,
    Metadata,
    MetricRecord,
    RecordDict,
)

from flotilla_fl.server_app import TrackingFedAvg, reply_cluster_name


def _reply(node_id: int, content: RecordDict) -> Message:
    meta = Metadata(run_id=1, message_id=f"m{node_id}", src_node_id=node_id, dst_node_id=1,
                    reply_to_message_id=f"i{node_id}", group_id="1", created_at=time.time(),
                    ttl=60.0, message_type=MessageType.TRAIN)
    # Message(metadata=...) is how Flower builds received replies; its typed overloads only
    # cover messages a ServerApp or ClientApp creates, hence the Any.
    message_cls: Any = Message
    return cast(Message, message_cls(content=content, metadata=meta))


def _train_reply(node_id: int, name: str | None, value: float, n: int) -> Message:
    records: dict[str, ArrayRecord | MetricRecord | ConfigRecord] = {
        "arrays": ArrayRecord([np.full((2, 2), value), np.full(2, value)]),
        "metrics": MetricRecord({"train-loss": value, "train-accuracy": 0.5, "num-examples": n}),
    }
    if name is not None:
        records["client-info"] = ConfigRecord({"cluster-name": name})
    return _reply(node_id, RecordDict(records))


def test_aggregate_train_records_cluster_names_and_averages() -> None:
    strategy = TrackingFedAvg(fraction_train=1.0, min_clients=3)
    replies = [_train_reply(11, "west", 1.0, 100), _train_reply(12, "east", 3.0, 300),
               _train_reply(13, None, 0.0, 0)]
    arrays, metrics = strategy.aggregate_train(2, replies)
    assert strategy.clients[2] == ["east", "node-13", "west"]
    assert arrays is not None and metrics is not None
    weights = arrays.to_numpy_ndarrays()
    assert np.allclose(weights[0], 2.5) and np.allclose(weights[1], 2.5)
    assert strategy.train_metrics[2]["loss"] == 2.5
    assert strategy.train_metrics[2]["accuracy"] == 0.5


def test_reply_cluster_name_falls_back_to_node_id() -> None:
    assert reply_cluster_name(_train_reply(5, "edge-1", 0.0, 1)) == "edge-1"
    assert reply_cluster_name(_train_reply(5, None, 0.0, 1)) == "node-5"
    empty = _reply(6, RecordDict({"client-info": ConfigRecord({"cluster-name": ""})}))
    assert reply_cluster_name(empty) == "node-6"
