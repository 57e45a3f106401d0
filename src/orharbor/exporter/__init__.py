"""Exporter: dataset rows to self-contained Harbor task directories."""

from orharbor.exporter.harbor import BASE_IMAGE, ExportOptions, export_dataset, export_row, write_dataset_index

__all__ = ["BASE_IMAGE", "ExportOptions", "export_dataset", "export_row", "write_dataset_index"]
