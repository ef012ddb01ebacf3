"""The machine-readable progress line the ServerApp prints once per round.

    FLOTILLA_PROGRESS {"round":2,"rounds":3,"clients":["cluster-a","cluster-b","cluster-c"],
                       "metrics":{"accuracy":0.83,"loss":0.41},"source":"server", ...}

(one line, no spaces). "clients" are the cluster names (node_config "cluster-name") of the
nodes whose training replies were aggregated in that round, sorted. "metrics" are the global
model's accuracy and loss on the held-out test set ("source": "server"), or, when the ServerApp
has no test set, the clients' weighted evaluation on their own validation data ("source":
"clients"). "train" carries the clients' weighted training loss and accuracy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

PREFIX = "FLOTILLA_PROGRESS "


@dataclass
class RoundProgress:
    """What one round produced."""

    round: int
    rounds: int
    clients: list[str]
    metrics: dict[str, float]
    source: str
    train: dict[str, float] = field(default_factory=dict)


def format_line(p: RoundProgress) -> str:
    body = {
        "round": p.round,
        "rounds": p.rounds,
        "clients": sorted(p.clients),
        "metrics": {k: round(v, 6) for k, v in sorted(p.metrics.items())},
        "source": p.source,
        "train": {k: round(v, 6) for k, v in sorted(p.train.items())},
    }
    return PREFIX + json.dumps(body, separators=(",", ":"))


def parse_lines(lines: Iterable[str]) -> list[RoundProgress]:
    """Every progress line in lines (other lines are skipped), in order."""
    out: list[RoundProgress] = []
    for line in lines:
        pos = line.find(PREFIX)
        if pos < 0:
            continue
        body = json.loads(line[pos + len(PREFIX) :])
        if not isinstance(body, dict):
            raise ValueError(f"progress line is not a JSON object: {line!r}")
        out.append(
            RoundProgress(
                round=int(body["round"]),
                rounds=int(body["rounds"]),
                clients=[str(c) for c in body["clients"]],
                metrics={str(k): float(v) for k, v in dict(body["metrics"]).items()},
                source=str(body.get("source", "")),
                train={str(k): float(v) for k, v in dict(body.get("train", {})).items()},
            )
        )
    return out


def pick_metrics(values: Mapping[str, object], mapping: Mapping[str, str]) -> dict[str, float]:
    """Rename the numeric entries of values by mapping {source key: progress key}."""
    out: dict[str, float] = {}
    for src, dst in mapping.items():
        value = values.get(src)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[dst] = float(value)
    return out
