"""Tests for where the apps look for their data and outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from flotilla_fl import settings


def test_env_wins_over_node_config(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    cfg_dir = tmp_path / "cfg"
    env_dir.mkdir()
    cfg_dir.mkdir()
    got = settings.resolve_data_path({"FLOTILLA_DATA_PATH": str(env_dir)},
                                     {"data-path": str(cfg_dir)})
    assert got == env_dir


def test_node_config_is_the_fallback(tmp_path: Path) -> None:
    assert settings.resolve_data_path({}, {"data-path": str(tmp_path)}) == tmp_path
    assert settings.resolve_data_path({"FLOTILLA_DATA_PATH": "  "},
                                      {"data-path": str(tmp_path)}) == tmp_path


def test_neither_set_names_both_places() -> None:
    with pytest.raises(settings.ConfigError) as err:
        settings.resolve_data_path({}, {})
    assert "FLOTILLA_DATA_PATH" in str(err.value)
    assert "data-path" in str(err.value)
    assert "flower-superexec" in str(err.value)


def test_missing_folder_names_the_path_and_its_source(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(settings.ConfigError, match=r"nope.*\$FLOTILLA_DATA_PATH"):
        settings.resolve_data_path({"FLOTILLA_DATA_PATH": str(missing)}, {})
    with pytest.raises(settings.ConfigError, match=r'nope.*node_config "data-path"'):
        settings.resolve_data_path({}, {"data-path": str(missing)})


def test_non_string_data_path_is_rejected() -> None:
    with pytest.raises(settings.ConfigError, match="must be a string"):
        settings.resolve_data_path({}, {"data-path": 3})


def test_optional_and_progress_paths(tmp_path: Path) -> None:
    env = {"FLOTILLA_TEST_PATH": "/from/env"}
    assert settings.resolve_optional_path(env, "FLOTILLA_TEST_PATH", {"test-path": "/cfg"},
                                          "test-path") == Path("/from/env")
    assert settings.resolve_optional_path({}, "FLOTILLA_TEST_PATH", {"test-path": "/cfg"},
                                          "test-path") == Path("/cfg")
    assert settings.resolve_optional_path({}, "FLOTILLA_TEST_PATH", {"test-path": ""},
                                          "test-path") is None
    assert settings.resolve_progress_file({}, tmp_path) == tmp_path / "progress.jsonl"
    assert settings.resolve_progress_file({"FLOTILLA_PROGRESS_FILE": "/p.jsonl"},
                                          tmp_path) == Path("/p.jsonl")
    assert settings.resolve_progress_file({}, None) is None


def test_cluster_name_and_typed_getters() -> None:
    assert settings.cluster_name({"cluster-name": "east"}, 9) == "east"
    assert settings.cluster_name({}, 9) == "node-9"
    assert settings.get_int({"r": 3}, "r") == 3
    assert settings.get_float({"lr": 1}, "lr") == 1.0
    with pytest.raises(settings.ConfigError, match="'r' must be an integer"):
        settings.get_int({"r": "3"}, "r")
    with pytest.raises(settings.ConfigError, match="must be an integer"):
        settings.get_int({"r": True}, "r")
    with pytest.raises(settings.ConfigError, match="must be a number"):
        settings.get_float({}, "lr")
