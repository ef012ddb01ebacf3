"""Tests for the synthetic, label-skewed data generator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flotilla_fl import data

CLUSTERS = ("cluster-a", "cluster-b", "cluster-c")


def test_same_seed_same_data_other_seed_other_data() -> None:
    a_clusters, a_test = data.generate(data.Spec(CLUSTERS, seed=7))
    b_clusters, b_test = data.generate(data.Spec(CLUSTERS, seed=7))
    c_clusters, _ = data.generate(data.Spec(CLUSTERS, seed=8))
    assert np.array_equal(a_test.x, b_test.x) and np.array_equal(a_test.y, b_test.y)
    for name in CLUSTERS:
        for split in (0, 1):
            assert np.array_equal(a_clusters[name][split].x, b_clusters[name][split].x)
            assert np.array_equal(a_clusters[name][split].y, b_clusters[name][split].y)
        assert not np.array_equal(a_clusters[name][0].x, c_clusters[name][0].x)


def test_each_cluster_mostly_sees_its_home_classes() -> None:
    spec = data.Spec(CLUSTERS, seed=1, train_per_cluster=4000)
    clusters, _ = data.generate(spec)
    for index, name in enumerate(CLUSTERS):
        y = clusters[name][0].y
        home = data.home_classes(index, spec.n_classes)
        share = np.isin(y, home).mean()
        assert share == pytest.approx(spec.skew, abs=0.02), name
        # Every class still appears a little, so the label set is the same everywhere.
        assert set(np.unique(y)) == set(range(spec.n_classes))
    # Different clusters have different home classes.
    homes = {data.home_classes(i, spec.n_classes) for i in range(len(CLUSTERS))}
    assert len(homes) == len(CLUSTERS)


def test_test_set_is_balanced_and_sized() -> None:
    spec = data.Spec(CLUSTERS, seed=2, test_per_class=50)
    _, test = data.generate(spec)
    assert test.x.shape == (50 * spec.n_classes, spec.n_features)
    assert np.bincount(test.y).tolist() == [50] * spec.n_classes


def test_class_weights() -> None:
    w = data.class_weights(0, 4, 0.9)
    assert w.sum() == pytest.approx(1.0)
    assert w.tolist() == pytest.approx([0.45, 0.45, 0.05, 0.05])
    assert data.class_weights(3, 4, 1.0).tolist() == pytest.approx([0.5, 0.0, 0.0, 0.5])
    with pytest.raises(ValueError, match="skew"):
        data.class_weights(0, 4, 1.5)


def test_write_lays_out_one_folder_per_cluster(tmp_path: Path) -> None:
    manifest = data.write(tmp_path, data.Spec(CLUSTERS, seed=3, train_per_cluster=40,
                                              val_per_cluster=10, test_per_class=5))
    for name in CLUSTERS:
        assert len(data.load_split(tmp_path / name, "train")) == 40
        assert len(data.load_split(tmp_path / name, "val")) == 10
    assert len(data.load_split(tmp_path / data.TEST_DIR, "test")) == 5 * data.N_CLASSES
    on_disk = json.loads((tmp_path / "manifest.json").read_text())
    assert on_disk == json.loads(json.dumps(manifest))
    assert sorted(on_disk["clusters"]) == sorted(CLUSTERS)


def test_load_split_error_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "train.npz")):
        data.load_split(tmp_path, "train")


@pytest.mark.parametrize(
    "names, match",
    [
        (("Cluster-A",), "DNS label"),
        (("../x",), "DNS label"),
        (("a", "a"), "repeat"),
        (("test",), "reserved"),
        ((), "at least one"),
    ],
)
def test_rejects_bad_cluster_names(names: tuple[str, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        data.validate_cluster_names(names)


def test_cli_generate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = data.main(["generate", "--out", str(tmp_path), "--clusters", "east,west",
                    "--seed", "4", "--train-per-cluster", "30", "--test-per-class", "3"])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    assert sorted(printed["clusters"]) == ["east", "west"]
    assert (tmp_path / "east" / "train.npz").is_file()
    assert data.main(["generate", "--out", str(tmp_path), "--clusters", "Bad_Name"]) == 2
    assert "DNS label" in capsys.readouterr().err
