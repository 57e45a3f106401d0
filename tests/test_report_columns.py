"""The report's printed tables: the model and scored columns, and the modelling tables' mean reward."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from orharbor.cli import main

from jobfolders import algorithm_details, write_trial


def level1(objective, reward):
    return algorithm_details("jobshop", "4x4", 1, reward, objective, reference=100, naive=200)


def spec(correct: int | None) -> dict:
    return {
        "kind": "modelling",
        "executed": 1,
        "correct": correct,
        "reward": float(correct or 0),
        "metadata": {"kind": "modelling", "source": "spec", "spec": "transportation_lp", "difficulty": "medium"},
    }


@pytest.fixture
def small_job(tmp_path):
    """codex (model gpt-x): 3 job shop trials, 2 scored; 3 spec trials, 2 scored. oracle (no model): 1 of each."""
    job = tmp_path / "job"
    write_trial(job, "a1", "jobshop-4x4-l1-s1", reward=1.0, details=level1(100, 1.0))
    write_trial(job, "a2", "jobshop-4x4-l1-s2", reward=0.5, details=level1(150, 0.5))
    write_trial(job, "a3", "jobshop-4x4-l1-s3", exception="SandboxBuildFailedError", details=level1(None, -1.0))
    write_trial(job, "a4", "jobshop-4x4-l1-s1", agent="oracle", model=None, reward=1.0, details=level1(100, 1.0))
    write_trial(job, "m1", "transportation_lp", reward=1.0, details=spec(1))
    write_trial(job, "m2", "transportation_lp", reward=0.0, details=spec(0))
    write_trial(job, "m3", "transportation_lp", exception="SandboxBuildFailedError", details=spec(None))
    write_trial(job, "m4", "transportation_lp", agent="oracle", model=None, reward=1.0, details=spec(1))
    return job


def parse_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """The terminal report's tables by title: each row as {column title: cell}, split at the header's columns."""
    out = {}
    for block in text.strip().split("\n\n"):
        title, header, *rows = block.splitlines()
        titles = [t for t in header.split("  ") if t.strip()]
        starts, at = [], 0
        for t in titles:
            at = header.index(t.strip(), at)
            starts.append(at)
            at += len(t.strip())
        bounds = list(zip(starts, starts[1:] + [None]))
        out[title] = [{t.strip(): row[a:b].strip() for t, (a, b) in zip(titles, bounds)} for row in rows]
    return out


def test_the_terminal_table_shows_model_and_scored(small_job):
    """The algorithm table: the agent's model (Harbor's model_info, '-' without one) and the scored trials."""
    result = CliRunner().invoke(main, ["report", str(small_job)])
    assert result.exit_code == 0, result.output
    tables = parse_tables(result.stdout)
    [algorithm] = [rows for title, rows in tables.items() if title.startswith("Algorithm tasks")]
    header = list(algorithm[0])
    assert header[:2] == ["agent", "model"] and header.index("scored") == header.index("trials") + 1
    shown = {row["agent"]: (row["model"], row["trials"], row["scored"], row["mean reward"]) for row in algorithm}
    assert shown == {"codex": ("gpt-x", "3", "2", "+0.750"), "oracle": ("-", "1", "1", "+1.000")}


def test_the_modelling_tables_show_the_mean_reward(small_job):
    """By difficulty and by family: model, scored and the mean reward over the scored trials, before its interval."""
    result = CliRunner().invoke(main, ["report", str(small_job), "--kind", "modelling"])
    assert result.exit_code == 0, result.output
    tables = parse_tables(result.stdout)
    assert len(tables) == 2 and all(title.startswith("Modelling tasks by ") for title in tables)
    for rows in tables.values():
        header = list(rows[0])
        assert header.index("95% CI") == header.index("mean reward") + 1 and header[:2] == ["agent", "model"]
        shown = {row["agent"]: (row["model"], row["trials"], row["scored"], row["mean reward"]) for row in rows}
        assert shown == {"codex": ("gpt-x", "3", "2", "+0.500"), "oracle": ("-", "1", "1", "+1.000")}


def test_markdown_has_the_same_columns(small_job):
    text = CliRunner().invoke(main, ["report", str(small_job), "--format", "markdown"]).stdout
    assert "| codex | gpt-x | jobshop | 4x4 | 1 | 3 | 2 | +0.750 |" in text
    assert "| oracle | - | spec | medium | 1 | 1 | 100% | 100% | 0% | +1.000 |" in text
