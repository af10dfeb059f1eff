"""Field types shared by task.toml and recipe tables."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _check_version(value: str) -> str:
    if not value or not all(part.isdigit() for part in value.split(".")):
        raise ValueError(f"expected a version like '3.11', got {value!r}")
    return value


PythonVersion = Annotated[str, AfterValidator(_check_version)]
"""A field holding a Python version such as "3.11" or "3.11.7"."""
