"""Integration test: a real Flower deployment on loopback, through hack/flwr/run-local.sh.

It starts a TLS SuperLink, three SuperNodes, a ServerApp SuperExec and three ClientApp
SuperExecs as separate processes, submits the app with `flwr run`, and checks what came out.
Select it with `pytest -m federation`; skip it with `-m "not federation"`. About a minute.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from flotilla_fl.progress import parse_lines

REPO = Path(__file__).resolve().parents[3]
RUN_LOCAL = REPO / "hack" / "flwr" / "run-local.sh"
CLUSTERS = ["cluster-a", "cluster-b", "cluster-c"]
ROUNDS = 3


@pytest.mark.federation
def test_three_clusters_three_rounds(tmp_path: Path) -> None:
    env = dict(os.environ, WORK_DIR=str(tmp_path), ROUNDS=str(ROUNDS),
               CLUSTERS=",".join(CLUSTERS), TIMEOUT="150")
    # run-local.sh gives up after TIMEOUT itself; past 240 s it gets SIGTERM (not SIGKILL), so
    # its EXIT trap still stops the Flower processes it started.
    with subprocess.Popen([str(RUN_LOCAL)], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            proc.terminate()
            stdout, stderr = proc.communicate(timeout=30)
            pytest.fail(f"run-local.sh took over 240 s:\n{stdout}\n{stderr}")
    assert proc.returncode == 0, f"run-local.sh failed:\n{stdout}\n{stderr}"

    status = json.loads((tmp_path / "out" / "status.json").read_text())
    assert status["runs"][0]["status"] == "finished:completed"

    # One progress line per round, each naming the three clusters that trained in it.
    progress = parse_lines((tmp_path / "out" / "progress.jsonl").read_text().splitlines())
    assert [p.round for p in progress] == list(range(1, ROUNDS + 1))
    for p in progress:
        assert p.rounds == ROUNDS
        assert p.clients == CLUSTERS, p
        assert p.source == "server"
        assert 0.0 <= p.metrics["accuracy"] <= 1.0
    assert progress[-1].metrics["accuracy"] > progress[0].metrics["accuracy"]

    # The same lines reach the SuperLink as the run's log (`flwr log RUN_ID`).
    logged = parse_lines((tmp_path / "logs" / "run.log").read_text().splitlines())
    assert [(p.round, p.clients) for p in logged] == [(p.round, p.clients) for p in progress]

    # The federated model beats the worst (here: every) cluster trained alone.
    rows = json.loads((tmp_path / "out" / "compare.json").read_text())
    federated, alone = rows[0], rows[1:]
    assert federated["model"] == "federated (FedAvg)"
    assert [r["model"] for r in alone] == [f"{c} alone" for c in CLUSTERS]
    assert federated["accuracy"] > min(r["accuracy"] for r in alone)
    assert federated["accuracy"] > max(r["accuracy"] for r in alone)
    # The saved model is the one the ServerApp scored in its last round.
    assert federated["accuracy"] == pytest.approx(progress[-1].metrics["accuracy"], abs=1e-6)
    assert "federated (FedAvg)" in stdout
