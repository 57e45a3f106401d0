"""orharbor report over the real job folder of an `orharbor check` run (Harbor's trial code, bubblewrap)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from orharbor import check, problem_modules
from orharbor.cli import main
from orharbor.exporter import ExportOptions, export_dataset
from orharbor.exporter.modelling import export_retail, export_spec

from quick_retail import QUICK_RETAIL

AGENTS = {"oracle": 1.0, "orharbor-naive": 0.0, "nop": -1.0}


@pytest.mark.slow
@pytest.mark.sandbox
def test_report_of_a_check_run_shows_oracle_naive_and_nop_per_class(shipped_rows, shipped_specs, retail_rows, tmp_path):
    """One level-1 task per class, one level-2 task, two specs and a RetailOpt scenario; tasks deleted before."""
    tasks = tmp_path / "tasks"
    smallest = {}
    for row in shipped_rows:
        if row["level"] == 1:
            smallest.setdefault(row["problem"], row)
    level2 = next(row for row in shipped_rows if row["level"] == 2 and row["problem"] == "jobshop")
    export_dataset([*smallest.values(), level2], tasks, ExportOptions())
    for spec in shipped_specs[:2]:
        export_spec(spec, tasks, ExportOptions())
    export_retail(next(r for r in retail_rows if r["scenario_id"] == QUICK_RETAIL[0]), tasks, ExportOptions())
    results = check.check_tasks(tasks, jobs=2, jobs_dir=tmp_path / "jobs")
    assert all(r.ok for r in results), [r.problem_text() for r in results if not r.ok]
    shutil.rmtree(tasks)  # the job folder must describe its trials by itself

    result = CliRunner().invoke(main, ["report", str(tmp_path / "jobs"), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["skipped_trials"] == 0 and data["trials"] == 3 * len(results)

    rows = data["algorithm"]
    assert {r["problem"] for r in rows} == set(problem_modules.names())
    for row in rows:
        assert row["mean_reward"] == AGENTS[row["agent"]] and row["ci_low"] == row["ci_high"] == row["mean_reward"]
        assert row["feasible_rate"] == (0.0 if row["agent"] == "nop" else 1.0) and row["errors"] == {}
    oracle = [r for r in rows if r["agent"] == "oracle"]
    assert all(r["gap_reference"] == 0.0 for r in oracle)
    assert any(r["gap_bound"] is not None for r in oracle)  # the bound recorded by the reference solver
    [oracle_level2] = [r for r in oracle if r["level"] == 2]
    assert oracle_level2["instance_min"] == oracle_level2["instance_max"] == 1.0

    modelling = {(r["agent"], r["source"]): r for r in data["modelling"]["by_family"]}
    assert set(modelling) == {(agent, source) for agent in AGENTS for source in ("spec", "retailopt")}
    for source in ("spec", "retailopt"):
        assert modelling[("oracle", source)]["accuracy"] == 1.0
        assert modelling[("oracle", source)]["execution_rate"] == 1.0
        assert modelling[("orharbor-naive", source)]["silent_failure_rate"] == 1.0
        assert modelling[("nop", source)]["execution_rate"] == 0.0
    assert modelling[("oracle", "retailopt")]["family"] == "F1"

    markdown = CliRunner().invoke(
        main, ["report", str(tmp_path / "jobs"), "--format", "markdown", "--html", str(tmp_path / "report.html")]
    )
    assert markdown.exit_code == 0 and "| oracle | - | jobshop |" in markdown.stdout
    assert (tmp_path / "report.html").read_text().count("data:image/png;base64,") == 3
