"""Flower ClientApp: trains the global model on this cluster's own data, and evaluates it.

The data folder comes from $FLOTILLA_DATA_PATH, else node_config "data-path" (see settings.py);
it holds train.npz and val.npz written by `python -m flotilla_fl.data generate`. Replies carry
the weights ("arrays"), the metrics with "num-examples" that FedAvg weights by ("metrics"), and
the node's cluster name ("client-info"), which the ServerApp reports per round.
"""

from __future__ import annotations

import os
import zlib

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from flotilla_fl import model
from flotilla_fl.data import load_split
from flotilla_fl.settings import (
    cluster_name,
    get_float,
    get_int,
    resolve_data_path,
)

app = ClientApp()

CLIENT_INFO = "client-info"


def _arrays(msg: Message) -> model.Params:
    record = msg.content["arrays"]
    if not isinstance(record, ArrayRecord):
        raise TypeError(f"message record 'arrays' is a {type(record).__name__}, not ArrayRecord")
    return model.from_arrays(record.to_numpy_ndarrays())


def _server_round(msg: Message) -> int:
    config = msg.content.get("config")
    if isinstance(config, ConfigRecord):
        value = config.get("server-round", 0)
        if isinstance(value, int):
            return value
    return 0


def _info(context: Context) -> ConfigRecord:
    return ConfigRecord({"cluster-name": cluster_name(context.node_config, context.node_id)})


@app.train()
def train(msg: Message, context: Context) -> Message:
    """Train locally for local-epochs and reply with the new weights and train metrics."""
    data_dir = resolve_data_path(os.environ, context.node_config)
    data = load_split(data_dir, "train")
    params = _arrays(msg)
    name = cluster_name(context.node_config, context.node_id)
    cfg = context.run_config
    # Deterministic per (seed, round, cluster): reruns give the same numbers.
    rng = np.random.default_rng(
        [get_int(cfg, "seed"), _server_round(msg), zlib.crc32(name.encode())]
    )
    trained, scores = model.train(
        params,
        data.x,
        data.y,
        epochs=get_int(cfg, "local-epochs"),
        learning_rate=get_float(cfg, "learning-rate"),
        batch_size=get_int(cfg, "batch-size"),
        rng=rng,
    )
    print(
        f"[{name}] round {_server_round(msg)}: trained on {len(data)} samples from {data_dir}, "
        f"loss {scores.loss:.4f} accuracy {scores.accuracy:.4f}",
        flush=True,
    )
    content = RecordDict(
        {
            "arrays": ArrayRecord(model.to_arrays(trained)),
            "metrics": MetricRecord(
                {
                    "train-loss": scores.loss,
                    "train-accuracy": scores.accuracy,
                    "num-examples": len(data),
                }
            ),
            CLIENT_INFO: _info(context),
        }
    )
    return Message(content=content, reply_to=msg)


@app.evaluate()
def evaluate(msg: Message, context: Context) -> Message:
    """Evaluate the global model on this cluster's validation data."""
    data = load_split(resolve_data_path(os.environ, context.node_config), "val")
    scores = model.evaluate(_arrays(msg), data.x, data.y)
    content = RecordDict(
        {
            "metrics": MetricRecord(
                {
                    "eval-loss": scores.loss,
                    "eval-accuracy": scores.accuracy,
                    "num-examples": len(data),
                }
            ),
            CLIENT_INFO: _info(context),
        }
    )
    return Message(content=content, reply_to=msg)
