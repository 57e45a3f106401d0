"""TaskFolder, the reader of an exported task: what the exporter wrote, read back from a real export.

Level 1, level 2, a modelling spec and a flat ``--for tinker`` export, each read
as check, verify, report and the ladder read it; a broken task.toml is named.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.agent_files import differences
from orharbor.exporter.profiles import PROFILES
from orharbor.exporter.task_folder import TaskFolder
from orharbor.task_template.verify import LAYOUT
from orharbor.task_toml import TaskTomlError
from orharbor.verifiers import contract


def _row(shipped_rows, level: int) -> dict:
    return next(r for r in shipped_rows if r["id"] == f"jobshop-4x4-l{level}-s0")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, shipped_rows, shipped_specs) -> dict[str, Path]:
    """One task of each shape: level 1, level 2, a spec, and level 2 flat for Tinker."""
    from orharbor.exporter.modelling import export_spec

    out = tmp_path_factory.mktemp("task-folder")
    return {
        "l1": export_row(_row(shipped_rows, 1), out / "default"),
        "l2": export_row(_row(shipped_rows, 2), out / "default"),
        "spec": export_spec(shipped_specs[0], out / "default"),
        "tinker": export_row(
            _row(shipped_rows, 2), out / "tinker", ExportOptions(consumer="tinker", verifier_mode="shared")
        ),
    }


def _toml(task: Path) -> dict:
    return tomllib.loads((task / "task.toml").read_text())


@pytest.mark.parametrize("shape", ["l1", "l2", "spec", "tinker"])
def test_it_reads_back_what_the_exporter_wrote(tasks, shape):
    task = tasks[shape]
    folder = TaskFolder(task)
    written = _toml(task)
    assert folder.path == task and folder.toml == task / "task.toml"
    assert folder.config == written and folder.validate() == written
    assert folder.metadata == written["metadata"]
    assert folder.name == written["task"]["name"] == f"orharbor/{task.name}"
    assert folder.verifier_timeout_s == float(written["verifier"]["timeout_sec"])
    assert folder.consumer is PROFILES["tinker" if shape == "tinker" else "harbor"]
    assert folder.differences() == differences(task) == []
    loaded = folder.contract()
    assert loaded == contract.load(str(folder.tests))
    assert isinstance(
        loaded,
        {
            "l1": contract.Level1Task,
            "l2": contract.Level2Task,
            "spec": contract.SpecTask,
            "tinker": contract.Level2Task,
        }[shape],
    )


def test_a_tree_tests_folder_is_read_where_it_is(tasks):
    assert TaskFolder(tasks["l2"]).tests == tasks["l2"] / "tests"


def test_a_flat_tinker_tests_folder_is_read_as_its_tree(tasks):
    """--for tinker: tests/ is flat; the reader rebuilds its tree once, elsewhere, and the contract reads it."""
    task = tasks["tinker"]
    assert (task / "tests" / LAYOUT).is_file() and not (task / "tests" / "eval").exists()
    tree = TaskFolder(task).tests
    assert tree != task / "tests" and (tree / "eval").is_dir()
    assert TaskFolder(task).tests == tree, "rebuilt once per process"
    level2 = TaskFolder(task).contract()
    assert all((tree / case.instance).is_file() for case in level2.cases)
    tree_task = TaskFolder(tasks["l2"]).contract()
    assert [c.instance for c in level2.cases] == [c.instance for c in tree_task.cases]


def test_each_part_is_read_once(tasks, tmp_path):
    """config and the contract are kept: a TaskFolder reads task.toml and task.json once."""
    import shutil

    task = Path(shutil.copytree(tasks["l1"], tmp_path / "l1"))
    folder = TaskFolder(task)
    config, loaded = folder.validate(), folder.contract()
    (task / "task.toml").write_text("not = [toml\n")
    (task / "tests" / "task.json").write_text("{")
    assert folder.config is config and folder.validate() is config and folder.contract() is loaded
    assert TaskFolder.of(folder) is folder and TaskFolder.of(task).path == task
    with pytest.raises(TaskTomlError):
        TaskFolder(task).config  # a new reader reads the file as it is now


@pytest.mark.parametrize(
    "text, says",
    [
        ("schema_version = \n", "not valid TOML"),
        (None, "no such file"),
        ("metadata = 3\n", "[metadata] must be a table"),
    ],
)
def test_a_broken_task_toml_is_named(tasks, tmp_path, text, says):
    import shutil

    task = Path(shutil.copytree(tasks["l1"], tmp_path / "l1"))
    toml = task / "task.toml"
    if text is None:
        toml.unlink()
    else:
        toml.write_text(text)
    with pytest.raises(TaskTomlError) as caught:
        TaskFolder(task).metadata
    assert str(caught.value).startswith(f"{toml}: ") and says in str(caught.value)
    assert caught.value.path == toml


def test_harbor_validation_is_asked_for_and_names_the_file(tasks, tmp_path):
    """config reads any TOML (report reads any Harbor task); validate() refuses what Harbor would."""
    import shutil

    task = Path(shutil.copytree(tasks["l1"], tmp_path / "l1"))
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("timeout_sec = ", 'timeout_sec = "soon" #', 1))
    folder = TaskFolder(task)
    assert folder.config  # parses
    with pytest.raises(TaskTomlError) as caught:
        folder.validate()
    message = str(caught.value)
    assert message.startswith(f"{toml}: ") and "Harbor cannot load this task" in message


def test_a_missing_verifier_timeout_is_named(tasks, tmp_path):
    import shutil

    task = Path(shutil.copytree(tasks["l1"], tmp_path / "l1"))
    toml = task / "task.toml"
    config = _toml(task)
    del config["verifier"]["timeout_sec"]
    import tomli_w

    toml.write_text(tomli_w.dumps(config))
    with pytest.raises(TaskTomlError, match=r"\[verifier\] timeout_sec is missing"):
        TaskFolder(task).verifier_timeout_s


def test_differences_see_the_folder_as_it_is_now(tasks, tmp_path):
    import shutil

    task = Path(shutil.copytree(tasks["l1"], tmp_path / "l1"))
    folder = TaskFolder(task)
    assert folder.differences() == []
    instance = task / "environment" / "instance.json"
    instance.write_text(json.dumps({"edited": True}))
    [line] = folder.differences()
    assert str(instance) in line and "differs from what was exported" in line


def test_seal_without_the_written_data_reads_the_consumer_from_task_toml(tasks, tmp_path):
    """A task edited after export is sealed again from its own task.toml (as test_verifier_trust's mutations)."""
    import shutil

    from orharbor.exporter.task_dir import seal
    from orharbor.task_template.verify import MANIFEST, describe

    task = Path(shutil.copytree(tasks["l1"], tmp_path / "l1"))
    test_sh = task / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text() + "# edited\n")
    seal(task / "tests")
    assert json.loads((task / "tests" / MANIFEST).read_text()) == describe(str(task / "tests"))
    assert TaskFolder(task).differences() == []
