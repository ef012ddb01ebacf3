"""The demo's claim, checked without processes: FedAvg beats every cluster alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flotilla_fl import compare, data, model

CLUSTERS = ("cluster-a", "cluster-b", "cluster-c")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data")
    data.write(out, data.Spec(CLUSTERS, seed=7))
    return out


def test_simulated_fedavg_beats_each_cluster_alone(data_dir: Path) -> None:
    rows = compare.compare(data_dir, CLUSTERS, None, compare.Hyper())
    federated, alone = rows[0], rows[1:]
    assert federated.model.startswith("federated")
    assert [r.model for r in alone] == [f"{c} alone" for c in CLUSTERS]
    assert federated.accuracy > 0.85
    for r in alone:
        assert federated.accuracy > r.accuracy + 0.1, r


def test_saved_model_is_scored_as_is(data_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "global_model.npz"
    zero = model.init_params(data.N_FEATURES, data.N_CLASSES)
    np.savez(path, weights=zero.weights, bias=zero.bias)
    rows = compare.compare(data_dir, CLUSTERS, compare.load_model(path), compare.Hyper())
    assert rows[0].accuracy == pytest.approx(0.25)  # uniform guess on a balanced 4-class set


def test_cli_json_and_discovery(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert compare.discover_clusters(data_dir) == CLUSTERS
    assert compare.main(["--data", str(data_dir), "--simulate", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in rows][1:] == [f"{c} alone" for c in CLUSTERS]
    assert compare.main(["--data", str(data_dir), "--model", "/does/not/exist.npz"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_table_lists_every_row() -> None:
    rows = [compare.Row("federated (FedAvg)", 0.9, 0.3, 1800),
            compare.Row("a alone", 0.7, 0.8, 600)]
    table = compare.format_table(rows, 2000)
    assert "federated (FedAvg)" in table and "a alone" in table and "0.9000" in table
