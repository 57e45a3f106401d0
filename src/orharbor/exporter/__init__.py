"""Exporter: dataset rows, modelling specs and RetailOpt rows to self-contained Harbor task directories.

- :mod:`~orharbor.exporter.task_dir`: what every task shares (options, task.toml, tests/, atomic builds);
- :mod:`~orharbor.exporter.collect_hook`: the collect hook Harbor runs as root before it takes anything out;
- :mod:`~orharbor.exporter.algorithm`: dataset rows (levels 1 and 2);
- :mod:`~orharbor.exporter.modelling`: modelling specs and RetailOpt rows;
- :mod:`~orharbor.exporter.dataset_index`: registry.json, dataset.toml and .gitattributes beside the tasks.
"""

from orharbor.exporter.algorithm import export_dataset, export_row
from orharbor.exporter.dataset_index import write_dataset_index
from orharbor.exporter.task_dir import ExportOptions
from orharbor.image_facts import BASE_IMAGE

__all__ = ["BASE_IMAGE", "ExportOptions", "export_dataset", "export_row", "write_dataset_index"]
