"""Turn other task collections into minidebug task folders: exercism practice exercises, SWE-bench-format
instances. Each importer returns an ImportReport saying what it wrote and what it skipped, and why."""

from .common import ImportReport, toml_string
from .exercism import import_exercism
from .swebench import import_swebench

__all__ = ["ImportReport", "import_exercism", "import_swebench", "toml_string"]
