"""Synthetic, label-skewed data sets: one folder per cluster plus a balanced held-out test set.

    python -m flotilla_fl.data generate --out DIR --clusters cluster-a,cluster-b,cluster-c --seed 7

writes
    DIR/<cluster>/train.npz, DIR/<cluster>/val.npz   (x: float64 [n, features], y: int64 [n])
    DIR/test/test.npz                                (balanced over classes)
    DIR/manifest.json                                (seed, shapes, per-cluster class counts)

Every class is a Gaussian blob around its own mean. Cluster i mostly sees its two "home"
classes (i mod C and i+1 mod C): a fraction `skew` of its samples come from them, the rest are
spread over the other classes. A model trained on one cluster alone is therefore poor on the
classes that cluster rarely sees, while the federation together covers them all.
Everything is drawn from numpy generators seeded by --seed, so the same arguments give the
same arrays.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flotilla_fl.model import FloatArray, IntArray

N_FEATURES = 12
N_CLASSES = 4
TEST_DIR = "test"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class Dataset:
    """Features x (samples, features) and labels y (samples,)."""

    x: FloatArray
    y: IntArray

    def __len__(self) -> int:
        return int(self.y.shape[0])


@dataclass(frozen=True)
class Spec:
    """What generate() draws."""

    clusters: tuple[str, ...]
    seed: int
    n_features: int = N_FEATURES
    n_classes: int = N_CLASSES
    train_per_cluster: int = 600
    val_per_cluster: int = 200
    test_per_class: int = 500
    skew: float = 0.97
    separation: float = 1.0


def home_classes(index: int, n_classes: int) -> tuple[int, int]:
    """The two classes cluster number `index` mostly sees."""
    return index % n_classes, (index + 1) % n_classes


def class_weights(index: int, n_classes: int, skew: float) -> FloatArray:
    """Probability of each class in cluster number `index`'s data (sums to 1)."""
    if not 0.0 <= skew <= 1.0:
        raise ValueError(f"skew must be in [0, 1], got {skew}")
    home = home_classes(index, n_classes)
    others = n_classes - len(set(home))
    weights = np.full(n_classes, (1.0 - skew) / others if others else 0.0)
    for c in set(home):
        weights[c] = skew / len(set(home))
    normalised: FloatArray = weights / weights.sum()
    return normalised


def _class_means(spec: Spec) -> FloatArray:
    rng = np.random.default_rng([spec.seed, 0])
    means: FloatArray = rng.normal(0.0, spec.separation, size=(spec.n_classes, spec.n_features))
    return means


def _draw(
    rng: np.random.Generator, means: FloatArray, weights: FloatArray, n: int
) -> Dataset:
    y = rng.choice(means.shape[0], size=n, p=weights).astype(np.int64)
    x = means[y] + rng.normal(0.0, 1.0, size=(n, means.shape[1]))
    return Dataset(x.astype(np.float64), y)


def validate_cluster_names(names: tuple[str, ...]) -> None:
    """Cluster names become folder names: lower-case DNS labels, unique, not 'test'."""
    if not names:
        raise ValueError("--clusters: give at least one cluster name, e.g. cluster-a,cluster-b")
    for name in names:
        if not _NAME.match(name) or len(name) > 63:
            raise ValueError(
                f"--clusters: {name!r} is not a lower-case DNS label (a-z, 0-9, '-')"
            )
        if name == TEST_DIR:
            raise ValueError(f"--clusters: {TEST_DIR!r} is reserved for the held-out test set")
    if len(set(names)) != len(names):
        raise ValueError(f"--clusters: names repeat in {','.join(names)}")


def generate(spec: Spec) -> tuple[dict[str, tuple[Dataset, Dataset]], Dataset]:
    """Draw each cluster's (train, val) data and the balanced test set."""
    validate_cluster_names(spec.clusters)
    means = _class_means(spec)
    clusters: dict[str, tuple[Dataset, Dataset]] = {}
    for index, name in enumerate(spec.clusters):
        rng = np.random.default_rng([spec.seed, 1, index])
        weights = class_weights(index, spec.n_classes, spec.skew)
        train = _draw(rng, means, weights, spec.train_per_cluster)
        val = _draw(rng, means, weights, spec.val_per_cluster)
        clusters[name] = (train, val)
    rng = np.random.default_rng([spec.seed, 2])
    y = np.repeat(np.arange(spec.n_classes, dtype=np.int64), spec.test_per_class)
    y = y[rng.permutation(y.shape[0])]
    x = means[y] + rng.normal(0.0, 1.0, size=(y.shape[0], spec.n_features))
    return clusters, Dataset(x.astype(np.float64), y)


def save_split(folder: Path, split: str, data: Dataset) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{split}.npz"
    np.savez(path, x=data.x, y=data.y)
    return path


def load_split(folder: Path, split: str) -> Dataset:
    """Load folder/<split>.npz; the error names the file and how to make it."""
    path = Path(folder) / f"{split}.npz"
    if not path.is_file():
        raise FileNotFoundError(
            f"data file {path} does not exist; create it with "
            "`python -m flotilla_fl.data generate --out DIR --clusters ...`"
        )
    with np.load(path) as npz:
        if "x" not in npz or "y" not in npz:
            raise ValueError(f"{path}: expected arrays 'x' and 'y', found {sorted(npz.files)}")
        return Dataset(np.asarray(npz["x"], np.float64), np.asarray(npz["y"], np.int64))


def write(out: Path, spec: Spec) -> dict[str, object]:
    """Generate and write everything under out; returns the manifest it wrote."""
    clusters, test = generate(spec)
    manifest: dict[str, object] = {
        "seed": spec.seed,
        "n_features": spec.n_features,
        "n_classes": spec.n_classes,
        "skew": spec.skew,
        "test": {"path": TEST_DIR, "samples": len(test)},
        "clusters": {},
    }
    per_cluster: dict[str, object] = {}
    for name, (train, val) in clusters.items():
        save_split(out / name, "train", train)
        save_split(out / name, "val", val)
        per_cluster[name] = {
            "train": len(train),
            "val": len(val),
            "train_class_counts": np.bincount(train.y, minlength=spec.n_classes).tolist(),
        }
    manifest["clusters"] = per_cluster
    save_split(out / TEST_DIR, "test", test)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def parse_clusters(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flotilla_fl.data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write per-cluster data and the held-out test set")
    gen.add_argument("--out", required=True, type=Path, help="output folder")
    gen.add_argument("--clusters", required=True, help="comma-separated cluster names")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--train-per-cluster", type=int, default=Spec.train_per_cluster)
    gen.add_argument("--val-per-cluster", type=int, default=Spec.val_per_cluster)
    gen.add_argument("--test-per-class", type=int, default=Spec.test_per_class)
    gen.add_argument("--skew", type=float, default=Spec.skew,
                     help="fraction of a cluster's samples from its two home classes")
    args = parser.parse_args(argv)
    try:
        spec = Spec(
            clusters=parse_clusters(args.clusters),
            seed=args.seed,
            train_per_cluster=args.train_per_cluster,
            val_per_cluster=args.val_per_cluster,
            test_per_class=args.test_per_class,
            skew=args.skew,
        )
        manifest = write(args.out, spec)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
