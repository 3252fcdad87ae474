"""Datasets: importers for benchmark and user files, and the demo set shipped in the package."""

from workbench.datasets.importers import (
    BadRow,
    ImportReport,
    ParsedFile,
    import_file,
    parse_bytes,
    parse_file,
)
from workbench.datasets.mapping import Mapping, parse_mapping
from workbench.datasets.opening import FORMATS
from workbench.datasets.readers import RowError

from workbench.datasets.demo import DEMO_DATASET, import_demo, load_demo_items  # noqa: E402

__all__ = [
    "DEMO_DATASET",
    "FORMATS",
    "BadRow",
    "ImportReport",
    "Mapping",
    "ParsedFile",
    "RowError",
    "import_demo",
    "import_file",
    "load_demo_items",
    "parse_bytes",
    "parse_file",
    "parse_mapping",
]
