"""Compare the federated model with each cluster's model trained alone, on the held-out test set.

    python -m flotilla_fl.compare --data DIR --model OUT/global_model.npz [--clusters a,b,c]
    python -m flotilla_fl.compare --data DIR --simulate     # in-process FedAvg instead of a file

Each "alone" model starts from the same zero initialisation and trains on its cluster's own
train.npz for rounds x local-epochs epochs (the same number of passes over its data that it made
in the federation). Prints a table, or JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from flotilla_fl import model
from flotilla_fl.aggregation import fedavg
from flotilla_fl.data import TEST_DIR, Dataset, load_split, parse_clusters


@dataclass(frozen=True)
class Hyper:
    """Training settings; defaults match pyproject's [tool.flwr.app.config]."""

    rounds: int = 3
    local_epochs: int = 5
    learning_rate: float = 0.1
    batch_size: int = 32
    seed: int = 0


@dataclass(frozen=True)
class Row:
    model: str
    accuracy: float
    loss: float
    train_samples: int


def discover_clusters(data: Path) -> tuple[str, ...]:
    """Every sub-folder of data that holds a train.npz, sorted."""
    return tuple(sorted(p.parent.name for p in data.glob("*/train.npz")))


def load_model(path: Path) -> model.Params:
    if not path.is_file():
        raise FileNotFoundError(
            f"model file {path} does not exist; the ServerApp writes it when "
            "$FLOTILLA_OUTPUT_PATH (or run config output-path) is set"
        )
    with np.load(path) as npz:
        return model.from_arrays([npz["weights"], npz["bias"]])


def _rng(h: Hyper, round_: int, name: str) -> np.random.Generator:
    return np.random.default_rng([h.seed, round_, zlib.crc32(name.encode())])


def train_alone(data: Dataset, name: str, h: Hyper, n_classes: int) -> model.Params:
    params = model.init_params(data.x.shape[1], n_classes)
    trained, _ = model.train(params, data.x, data.y, epochs=h.rounds * h.local_epochs,
                             learning_rate=h.learning_rate, batch_size=h.batch_size,
                             rng=_rng(h, 0, name))
    return trained


def simulate_fedavg(train: dict[str, Dataset], h: Hyper, n_classes: int) -> model.Params:
    """FedAvg in-process: what the real federation computes, without Flower."""
    n_features = next(iter(train.values())).x.shape[1]
    global_params = model.init_params(n_features, n_classes)
    for round_ in range(1, h.rounds + 1):
        results = []
        for name, data in train.items():
            local, _ = model.train(global_params, data.x, data.y, epochs=h.local_epochs,
                                   learning_rate=h.learning_rate, batch_size=h.batch_size,
                                   rng=_rng(h, round_, name))
            results.append((model.to_arrays(local), len(data)))
        global_params = model.from_arrays(list(fedavg(results)))
    return global_params


def compare(
    data_dir: Path, clusters: tuple[str, ...], federated: model.Params | None, h: Hyper,
    label: str = "federated (FedAvg)",
) -> list[Row]:
    """Rows: the federated model first, then each cluster alone, all scored on the test set."""
    test = load_split(data_dir / TEST_DIR, "test")
    n_classes = int(max(test.y.max() + 1, 2))
    train = {name: load_split(data_dir / name, "train") for name in clusters}
    if federated is None:
        federated = simulate_fedavg(train, h, n_classes)
        label = "federated (simulated FedAvg)"
    n_classes = federated.n_classes
    total = sum(len(d) for d in train.values())
    scores = model.evaluate(federated, test.x, test.y)
    rows = [Row(label, scores.accuracy, scores.loss, total)]
    for name, data in train.items():
        alone = model.evaluate(train_alone(data, name, h, n_classes), test.x, test.y)
        rows.append(Row(f"{name} alone", alone.accuracy, alone.loss, len(data)))
    return rows


def format_table(rows: list[Row], test_samples: int) -> str:
    width = max(len(r.model) for r in rows)
    lines = [f"{'model':<{width}}  {'train samples':>13}  {'test accuracy':>13}  {'test loss':>9}"]
    for r in rows:
        lines.append(
            f"{r.model:<{width}}  {r.train_samples:>13}  {r.accuracy:>13.4f}  {r.loss:>9.4f}"
        )
    lines.append(f"(held-out test set: {test_samples} samples, balanced over classes)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flotilla_fl.compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, type=Path, help="folder written by data generate")
    parser.add_argument("--clusters", default="", help="comma-separated; default: all in --data")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", type=Path, help="global_model.npz saved by the ServerApp")
    src.add_argument("--simulate", action="store_true", help="run FedAvg in-process instead")
    parser.add_argument("--rounds", type=int, default=Hyper.rounds)
    parser.add_argument("--local-epochs", type=int, default=Hyper.local_epochs)
    parser.add_argument("--learning-rate", type=float, default=Hyper.learning_rate)
    parser.add_argument("--batch-size", type=int, default=Hyper.batch_size)
    parser.add_argument("--seed", type=int, default=Hyper.seed)
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = parser.parse_args(argv)
    h = Hyper(args.rounds, args.local_epochs, args.learning_rate, args.batch_size, args.seed)
    try:
        clusters = parse_clusters(args.clusters) or discover_clusters(args.data)
        if not clusters:
            raise ValueError(f"no cluster folders with train.npz under {args.data}")
        federated = None if args.simulate else load_model(args.model)
        rows = compare(args.data, clusters, federated, h)
        test_samples = len(load_split(args.data / TEST_DIR, "test"))
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(r) for r in rows]))
    else:
        print(format_table(rows, test_samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
