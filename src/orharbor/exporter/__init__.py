"""Exporter: dataset rows, modelling specs and RetailOpt rows to self-contained Harbor task directories, and back.

- :mod:`~orharbor.exporter.task_dir`: what every task shares (options, task.toml, tests/, atomic builds);
- :mod:`~orharbor.exporter.collect_hook`: the collect hook Harbor runs as root before it takes anything out;
- :mod:`~orharbor.exporter.algorithm`: dataset rows (levels 1 and 2);
- :mod:`~orharbor.exporter.modelling`: modelling specs and RetailOpt rows;
- :mod:`~orharbor.exporter.dataset_index`: registry.json, dataset.toml and .gitattributes beside the tasks;
- :mod:`~orharbor.exporter.task_folder`: the reader, :class:`~orharbor.exporter.task_folder.TaskFolder`, an
  exported task read back for check, verify, report and the ladder.

The names below are imported when first used: a reader of task folders
(``orharbor report``, ``orharbor images``) imports the reader alone, not the
writers with the problem classes and the dataset builder behind them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orharbor.exporter.algorithm import export_dataset, export_row
    from orharbor.exporter.dataset_index import write_dataset_index
    from orharbor.exporter.task_dir import ExportOptions
    from orharbor.image_facts import BASE_IMAGE

#: Each name of the package, by the module it is defined in.
_HOMES = {
    "BASE_IMAGE": "orharbor.image_facts",
    "ExportOptions": "orharbor.exporter.task_dir",
    "export_dataset": "orharbor.exporter.algorithm",
    "export_row": "orharbor.exporter.algorithm",
    "write_dataset_index": "orharbor.exporter.dataset_index",
}

__all__ = ["BASE_IMAGE", "ExportOptions", "export_dataset", "export_row", "write_dataset_index"]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
