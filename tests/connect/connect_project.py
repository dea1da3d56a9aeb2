"""A dbt project whose profile points at the test process's Spark Connect server."""

from pathlib import Path
from typing import Mapping

from tests.functional.console_output import write_project


def write_connect_project(root: Path, name: str, url: str, warehouse: str,
                          models: Mapping[str, str]) -> Path:
    return write_project(root, name, f"method: connect\nhost: '{url}'\nwarehouse: {warehouse}",
                         models)
