"""Datasets: rows with precomputed references and baselines, and the shipped ones."""

from orharbor.datasets.build import solve_instance
from orharbor.datasets.engine import build_dataset
from orharbor.datasets.rows import RowError, read_rows, shipped_datasets, validate_row, write_rows

__all__ = ["build_dataset", "solve_instance", "RowError", "read_rows", "shipped_datasets", "validate_row", "write_rows"]
