"""Tests for the FLOTILLA_PROGRESS line."""

from __future__ import annotations

import json

from flotilla_fl.progress import PREFIX, RoundProgress, format_line, parse_lines, pick_metrics


def test_format_is_one_compact_json_line_with_sorted_clients() -> None:
    line = format_line(RoundProgress(round=2, rounds=5, clients=["c", "a", "b"],
                                     metrics={"loss": 0.4123456789, "accuracy": 0.83},
                                     source="server", train={"loss": 0.1}))
    assert line.startswith(PREFIX)
    assert "\n" not in line and " " not in line[len(PREFIX):]
    body = json.loads(line[len(PREFIX):])
    assert body == {"round": 2, "rounds": 5, "clients": ["a", "b", "c"],
                    "metrics": {"accuracy": 0.83, "loss": 0.412346}, "source": "server",
                    "train": {"loss": 0.1}}


def test_parse_finds_lines_inside_other_output() -> None:
    p1 = RoundProgress(1, 2, ["x"], {"accuracy": 0.5}, "clients")
    p2 = RoundProgress(2, 2, ["x", "y"], {"accuracy": 0.75, "loss": 1.0}, "server",
                       {"accuracy": 0.9})
    text = ["INFO :      [ROUND 1/2]", format_line(p1), "noise",
            "stdout: " + format_line(p2)]
    got = parse_lines(text)
    assert [g.round for g in got] == [1, 2]
    assert got[1].clients == ["x", "y"]
    assert got[1].metrics == {"accuracy": 0.75, "loss": 1.0}
    assert got[1].train == {"accuracy": 0.9}
    assert got[0].source == "clients"


def test_pick_metrics_renames_numbers_only() -> None:
    got = pick_metrics({"eval-loss": 0.5, "eval-accuracy": 1, "flag": True, "name": "x"},
                       {"eval-loss": "loss", "eval-accuracy": "accuracy", "flag": "f",
                        "name": "n", "absent": "a"})
    assert got == {"loss": 0.5, "accuracy": 1.0}
