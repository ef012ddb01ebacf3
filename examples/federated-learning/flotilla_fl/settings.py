"""Where the apps find their data and settings: environment first, then Flower's configs.

ClientApp data:  $FLOTILLA_DATA_PATH, else node_config "data-path" (flower-supernode --node-config).
ServerApp test:  $FLOTILLA_TEST_PATH, else run_config "test-path" (pyproject / flwr run -c).
ServerApp model: $FLOTILLA_OUTPUT_PATH, else run_config "output-path"; unset = do not save.
Progress file:   $FLOTILLA_PROGRESS_FILE, else <output path>/progress.jsonl when an output path
                 is set; unset = stdout only.

In Flower's process isolation the ClientApp and ServerApp run as children of the
flower-superexec process, so the environment they see is that process's environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

ENV_DATA_PATH = "FLOTILLA_DATA_PATH"
ENV_TEST_PATH = "FLOTILLA_TEST_PATH"
ENV_OUTPUT_PATH = "FLOTILLA_OUTPUT_PATH"
ENV_PROGRESS_FILE = "FLOTILLA_PROGRESS_FILE"
PROGRESS_FILE = "progress.jsonl"
NODE_DATA_PATH = "data-path"
NODE_CLUSTER_NAME = "cluster-name"
RUN_TEST_PATH = "test-path"
RUN_OUTPUT_PATH = "output-path"

# Flower's UserConfig values: bool | int | float | str | bytes (and lists in newer releases).
ConfigValue = object


class ConfigError(ValueError):
    """A missing or malformed setting; the message names it and the fix."""


def _text(config: Mapping[str, ConfigValue], key: str) -> str:
    value = config.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"config key {key!r} must be a string path, got {value!r}")
    return value.strip()


def resolve_data_path(env: Mapping[str, str], node_config: Mapping[str, ConfigValue]) -> Path:
    """The ClientApp's data folder; the error names both places it may come from."""
    raw = env.get(ENV_DATA_PATH, "").strip()
    source = f"${ENV_DATA_PATH}"
    if not raw:
        raw = _text(node_config, NODE_DATA_PATH)
        source = f'node_config "{NODE_DATA_PATH}"'
    if not raw:
        raise ConfigError(
            f"no training data folder: set ${ENV_DATA_PATH} in the environment of the "
            f"flower-superexec process that runs the ClientApp, or start flower-supernode with "
            f"--node-config '{NODE_DATA_PATH}=\"/path/to/data\"'"
        )
    path = Path(raw)
    if not path.is_dir():
        raise ConfigError(
            f"training data folder {path} (from {source}) does not exist or is not a folder; "
            f"generate it with `python -m flotilla_fl.data generate --out DIR --clusters ...` "
            f"and point {source} at DIR/<cluster>"
        )
    return path


def resolve_optional_path(
    env: Mapping[str, str], env_key: str, run_config: Mapping[str, ConfigValue], run_key: str
) -> Path | None:
    """env_key if set, else run_config[run_key] if non-empty, else None."""
    raw = env.get(env_key, "").strip() or _text(run_config, run_key)
    return Path(raw) if raw else None


def resolve_progress_file(env: Mapping[str, str], output_path: Path | None) -> Path | None:
    """$FLOTILLA_PROGRESS_FILE, else <output_path>/progress.jsonl, else None."""
    raw = env.get(ENV_PROGRESS_FILE, "").strip()
    if raw:
        return Path(raw)
    return output_path / PROGRESS_FILE if output_path is not None else None


def cluster_name(node_config: Mapping[str, ConfigValue], node_id: int) -> str:
    """node_config "cluster-name", else node-<id> so progress lines stay readable."""
    name = _text(node_config, NODE_CLUSTER_NAME)
    return name or f"node-{node_id}"


def get_int(config: Mapping[str, ConfigValue], key: str) -> int:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"run config {key!r} must be an integer, got {value!r}")
    return value


def get_float(config: Mapping[str, ConfigValue], key: str) -> float:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"run config {key!r} must be a number, got {value!r}")
    return float(value)
