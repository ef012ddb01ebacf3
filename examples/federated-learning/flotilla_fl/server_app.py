"""Flower ServerApp: FedAvg over the connected SuperNodes, one progress line per round.

Run config (pyproject [tool.flwr.app.config], override with `flwr run -c 'key=value'`):
num-server-rounds, min-available-clients, fraction-train, local-epochs, learning-rate,
batch-size, seed, num-features, num-classes, test-path, output-path.

After each round it evaluates the global model on the held-out test set ($FLOTILLA_TEST_PATH,
else run config "test-path"; the folder holding test.npz), logs the result in Flower's log and
prints one FLOTILLA_PROGRESS line to stdout (see progress.py). At the end it saves the global
model to <output>/global_model.npz when $FLOTILLA_OUTPUT_PATH or "output-path" is set.

Flower 1.42's flower-superexec starts the ServerApp with stdout and stderr sent to /dev/null
(it shows ClientApp output, not ServerApp output); the ServerApp's output reaches the SuperLink
as the run's log (`flwr log RUN_ID`). So each progress line is also appended to a file:
$FLOTILLA_PROGRESS_FILE, else <output>/progress.jsonl.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from logging import INFO
from pathlib import Path

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord
from flwr.common import log
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg

from flotilla_fl import model
from flotilla_fl.client_app import CLIENT_INFO
from flotilla_fl.data import Dataset, load_split
from flotilla_fl.progress import RoundProgress, format_line, pick_metrics
from flotilla_fl.settings import (
    ENV_OUTPUT_PATH,
    ENV_TEST_PATH,
    RUN_OUTPUT_PATH,
    RUN_TEST_PATH,
    ConfigError,
    resolve_progress_file,
    get_float,
    get_int,
    resolve_optional_path,
)

MODEL_FILE = "global_model.npz"

app = ServerApp()


def reply_cluster_name(msg: Message) -> str:
    """The cluster name a ClientApp put in its reply, else node-<source node id>."""
    info = msg.content.get(CLIENT_INFO) if not msg.has_error() else None
    if isinstance(info, ConfigRecord):
        name = info.get("cluster-name")
        if isinstance(name, str) and name:
            return name
    return f"node-{msg.metadata.src_node_id}"


class TrackingFedAvg(FedAvg):
    """Flower's FedAvg that also records, per round, which clusters' replies it aggregated."""

    def __init__(self, *, fraction_train: float, min_clients: int) -> None:
        super().__init__(
            fraction_train=fraction_train,
            fraction_evaluate=1.0,
            min_train_nodes=min_clients,
            min_evaluate_nodes=min_clients,
            min_available_nodes=min_clients,
        )
        self.clients: dict[int, list[str]] = {}
        self.train_metrics: dict[int, dict[str, float]] = {}
        self.eval_metrics: dict[int, dict[str, float]] = {}

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        replies = list(replies)
        self.clients[server_round] = sorted(
            reply_cluster_name(m) for m in replies if not m.has_error()
        )
        arrays, metrics = super().aggregate_train(server_round, replies)
        if metrics is not None:
            self.train_metrics[server_round] = pick_metrics(
                dict(metrics), {"train-loss": "loss", "train-accuracy": "accuracy"}
            )
        return arrays, metrics

    def aggregate_evaluate(
        self, server_round: int, replies: Iterable[Message]
    ) -> MetricRecord | None:
        metrics = super().aggregate_evaluate(server_round, list(replies))
        if metrics is not None:
            self.eval_metrics[server_round] = pick_metrics(
                dict(metrics), {"eval-loss": "loss", "eval-accuracy": "accuracy"}
            )
        return metrics


def load_test_set(path: Path | None, n_features: int) -> Dataset | None:
    if path is None:
        return None
    test = load_split(path, "test")
    if test.x.shape[1] != n_features:
        raise ConfigError(
            f"test set {path}/test.npz has {test.x.shape[1]} features but run config "
            f"num-features is {n_features}; regenerate the data or fix num-features"
        )
    return test


def save_model(arrays: ArrayRecord, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    params = model.from_arrays(arrays.to_numpy_ndarrays())
    path = out / MODEL_FILE
    np.savez(path, weights=params.weights, bias=params.bias)
    return path


@app.main()
def main(grid: Grid, context: Context) -> None:
    cfg = context.run_config
    rounds = get_int(cfg, "num-server-rounds")
    min_clients = get_int(cfg, "min-available-clients")
    n_features = get_int(cfg, "num-features")
    test_path = resolve_optional_path(os.environ, ENV_TEST_PATH, cfg, RUN_TEST_PATH)
    output_path = resolve_optional_path(os.environ, ENV_OUTPUT_PATH, cfg, RUN_OUTPUT_PATH)
    progress_file = resolve_progress_file(os.environ, output_path)
    if progress_file is not None:
        progress_file.parent.mkdir(parents=True, exist_ok=True)
    test = load_test_set(test_path, n_features)
    if test is None:
        log(INFO, "No held-out test set (%s / run config %s): progress uses client evaluation",
            ENV_TEST_PATH, RUN_TEST_PATH)

    strategy = TrackingFedAvg(
        fraction_train=get_float(cfg, "fraction-train"), min_clients=min_clients
    )

    def evaluate_fn(server_round: int, arrays: ArrayRecord) -> MetricRecord | None:
        if test is not None:
            scores = model.evaluate(model.from_arrays(arrays.to_numpy_ndarrays()), test.x, test.y)
            metrics = {"accuracy": scores.accuracy, "loss": scores.loss}
            source = "server"
            log(INFO, "Held-out test set after round %d: accuracy %.4f, loss %.4f",
                server_round, scores.accuracy, scores.loss)
        else:
            metrics = strategy.eval_metrics.get(server_round, {})
            source = "clients"
        if server_round >= 1:
            line = format_line(
                RoundProgress(
                    round=server_round,
                    rounds=rounds,
                    clients=strategy.clients.get(server_round, []),
                    metrics=metrics,
                    source=source,
                    train=strategy.train_metrics.get(server_round, {}),
                )
            )
            print(line, flush=True)
            if progress_file is not None:
                with progress_file.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
        return MetricRecord(dict(metrics)) if metrics else None

    initial = model.init_params(n_features, get_int(cfg, "num-classes"))
    result = strategy.start(
        grid=grid,
        initial_arrays=ArrayRecord(model.to_arrays(initial)),
        num_rounds=rounds,
        evaluate_fn=evaluate_fn,
    )
    if output_path is not None:
        path = save_model(result.arrays, output_path)
        log(INFO, "Saved the global model to %s", path)
