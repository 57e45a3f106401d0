"""RetailOpt-190: import of both published shapes, the prompts agents see, export, check and metrics."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from orharbor import check
from orharbor.cli import main
from orharbor.modelling import retailopt
from orharbor.modelling.retail.prompts import extract_data
from orharbor.verifiers import contract
from orharbor.verifiers.solver_run import Limits

from quick_retail import QUICK_RETAIL


def _card_shape(record: dict) -> dict:
    """The dataset card's shape of a benchmark record."""
    prompt = record["en_question"]
    return {
        "scenario_id": record["scenario_id"],
        "prompt_full": prompt,
        "prompt_schema": prompt.split("[DATA]")[0] + "[DATA]\nRead the data from data.json.\n\n[TASK]\nSolve.",
        "data": json.dumps(extract_data(prompt)),
        "reference_status": "OPTIMAL",
        "reference_objective": float(record["en_answer"]),
    }


def test_import_reads_all_38_scenarios_with_their_tolerances(retail_rows):
    assert len(retail_rows) == 38 and len({r["id"] for r in retail_rows}) == 38
    loose = {r["archetype"] for r in retail_rows if r["rel_tol"] == 1e-2}
    assert loose == {"retail_f6_pack_size_integer", "retail_f6_fixed_order_cost"}
    assert all(r["rel_tol"] == 1e-4 for r in retail_rows if r["archetype"] not in loose)
    base = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    assert (base["family"], base["reference_status"], base["reference_objective"]) == ("F1", "OPTIMAL", 378951.5)
    assert base["data"]["name"] == "retail_f1_base_v0" and base["data"]["periods"] == 20


def test_integer_scenarios_accept_a_plan_cheaper_than_their_mip_gap_reference(retail_rows):
    """The references are Gurobi incumbents at a 1% MIP gap: on the three integer archetypes a plan up to
    1% cheaper is correct (the retail model's MOQ v0 plan is 0.37% below its reference), a costlier one
    keeps the published tolerance, a plan stopped at its time limit is graded on its cost, and the 35 LP
    scenarios stay symmetric at 0.01% with their status exact."""
    from orharbor.verifiers.modelling import grade_answer

    integer = {r["archetype"] for r in retail_rows if "below_tol" in r}
    assert integer == {"retail_f6_pack_size_integer", "retail_f6_fixed_order_cost", "retail_f6_moq_binary"}
    moq = next(r for r in retail_rows if r["archetype"] == "retail_f6_moq_binary")
    ref = moq["reference_objective"]
    assert (moq["rel_tol"], moq["below_tol"]) == (1e-4, 1e-2)

    def reward(row: dict, objective: float) -> float:
        return grade_answer("OPTIMAL", objective, retailopt.expected_answer(row))[0]

    assert [reward(moq, ref * f) for f in (0.9963, 0.991, 1.00009)] == [1.0, 1.0, 1.0]
    assert [reward(moq, ref * f) for f in (0.989, 1.0002)] == [0.0, 0.0]
    # a plan stopped at its time limit is graded on its cost there (the reference is one too); not on an LP
    stopped = retailopt.expected_answer(moq)
    assert grade_answer("TIME_LIMIT", ref * 0.999, stopped)[0] == 1.0
    assert grade_answer("TIME_LIMIT", ref * 1.01, stopped)[0] == 0.0
    assert grade_answer("TIME_LIMIT", None, stopped)[0] == 0.0
    lp = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    assert "below_tol" not in lp and "below_tol" not in retailopt.expected_answer(lp)
    assert [reward(lp, lp["reference_objective"] * f) for f in (0.9963, 0.9999, 1.00009)] == [0.0, 1.0, 1.0]
    assert grade_answer("TIME_LIMIT", lp["reference_objective"], retailopt.expected_answer(lp))[0] == 0.0


def test_one_reading_of_the_orders_decides_the_grading_window_and_the_run_limit(retail_rows):
    """Integer orders widen the grading window and lengthen the run; data the retail model cannot read
    get the long run (to be safe) but no wider window; pack size 1 and zero MOQ or fixed cost are an LP."""
    from orharbor.exporter.modelling import RETAIL_RUN_LIMIT_S, retail_limits

    base = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")["data"]
    cases = {
        "lp": base,
        "integer": dict(base, constraints=dict(base.get("constraints") or {}, pack_size=6)),
        "unreadable": {k: v for k, v in base.items() if k != "shelf_life"},
    }
    cases["lp_too"] = dict(
        base,
        constraints=dict(base.get("constraints") or {}, pack_size=1, moq=0),
        costs=dict(base["costs"], fixed_order=0),
    )
    assert {name: retailopt.order_kind(data) for name, data in cases.items()} == {
        "lp": "lp",
        "integer": "integer",
        "unreadable": "unreadable",
        "lp_too": "lp",
    }
    assert [retailopt.integer_orders(data) for data in cases.values()] == [False, True, False, False]
    assert [retail_limits(data)[0] for data in cases.values()] == [
        RETAIL_RUN_LIMIT_S["lp"],
        RETAIL_RUN_LIMIT_S["integer"],
        RETAIL_RUN_LIMIT_S["integer"],
        RETAIL_RUN_LIMIT_S["lp"],
    ]
    record = {
        "scenario_id": "retail_f1_base_v0",
        "prompt_full": "[DATA]\n{}",
        "reference_status": "OPTIMAL",
        "reference_objective": 1.0,
    }
    assert ["below_tol" in retailopt.to_row(dict(record, data=data)) for data in cases.values()] == [
        False,
        True,
        False,
        False,
    ]


def test_an_integer_scenarios_task_states_and_carries_its_gap_tolerance(tmp_path, retail_rows):
    from orharbor.exporter.modelling import export_retail

    moq = next(r for r in retail_rows if r["archetype"] == "retail_f6_moq_binary")
    lp = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    for row in (moq, lp):
        export_retail(row, tmp_path, prompt="full")
    text = (tmp_path / moq["id"] / "instruction.md").read_text()
    assert "or up to 0.01 below it" in text and "status TIME_LIMIT, is graded on its objective" in text
    assert json.loads((tmp_path / moq["id"] / "tests" / "task.json").read_text())["expected"]["below_tol"] == 0.01
    assert "TIME_LIMIT, is graded" not in (tmp_path / lp["id"] / "instruction.md").read_text()
    assert "below_tol" not in json.loads((tmp_path / lp["id"] / "tests" / "task.json").read_text())["expected"]


def test_both_published_shapes_give_the_same_rows(tmp_path, retail_v0, retail_rows):
    records = [json.loads(line) for line in retail_v0.read_text().splitlines()]
    card = tmp_path / "card.jsonl"
    card.write_text("".join(json.dumps(_card_shape(r)) + "\n" for r in records))
    rows = retailopt.import_file(card)
    for got, want in zip(rows, retail_rows):
        assert got["prompt_schema"].endswith("Solve.")
        assert {k: v for k, v in got.items() if k != "prompt_schema"} == want


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "card.jsonl:2: not valid JSON"),
        ('{"en_question": "x", "en_answer": 1}', "card.jsonl:2: scenario_id: missing"),
        ('{"scenario_id": "retail_f1_base_v9", "question": "x"}', "neither en_question nor prompt_full"),
        (
            '{"scenario_id": "retail_f1_base_v9", "en_question": "[DATA]\\nno json here", "en_answer": 1}',
            "card.jsonl:2:",
        ),
        (
            '{"scenario_id": "retail_f1_base_v9", "prompt_full": "p", "data": "{}", "reference_status": "SOLVED",'
            ' "reference_objective": 1}',
            "reference_status: 'SOLVED' is not one of",
        ),
        (
            '{"scenario_id": "retail_f1_base_v9", "prompt_full": "p", "data": "[1]", "reference_status": "OPTIMAL",'
            ' "reference_objective": 1}',
            "data: expected the instance as a JSON object",
        ),
        (
            '{"scenario_id": "retail_f1_base_v9", "prompt_full": "p", "data": "{}", "reference_status": "OPTIMAL",'
            ' "reference_objective": NaN}',
            "reference_objective: expected a finite number",
        ),
        ('{"scenario_id": "retail_f1_base_v9", "en_question": "x", "en_answer": "lots"}', "neither a number nor"),
    ],
)
def test_bad_lines_name_file_line_and_key(tmp_path, retail_v0, line, message):
    first = retail_v0.read_text().splitlines()[0]
    path = tmp_path / "card.jsonl"
    path.write_text(first + "\n" + line + "\n")
    with pytest.raises(retailopt.RetailImportError, match=message.replace("(", r"\(")):
        retailopt.import_file(path)


def test_duplicate_scenarios_are_refused(tmp_path, retail_v0):
    first = retail_v0.read_text().splitlines()[0]
    path = tmp_path / "twice.jsonl"
    path.write_text(first + "\n\n" + first + "\n")
    with pytest.raises(retailopt.RetailImportError, match="twice.jsonl:3: scenario_id .* appears twice"):
        retailopt.import_file(path)


def test_an_infeasible_reference_is_kept_as_a_status():
    status, objective = retailopt.parse_answer("infeasible")
    assert (status, objective) == ("INFEASIBLE", None)
    assert retailopt.parse_answer("378951.5") == ("OPTIMAL", 378951.5)


def test_agent_prompt_drops_the_gurobi_instructions_and_keeps_the_model(retail_rows):
    row = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    full = retailopt.agent_prompt(row, "full")
    assert "gurobi" not in full.lower() and "[OUTPUT FORMAT]" not in full and "[TASK]" not in full
    assert "KEY EQUATIONS" in full and '"periods": 20' in full and full.startswith("[SCENARIO]")
    schema = retailopt.agent_prompt(row, "schema")
    assert '"periods": 20' not in schema and "/app/data.json" in schema and "`periods`: integer" in schema
    assert "KEY EQUATIONS" in schema and "gurobi" not in schema.lower()
    with pytest.raises(ValueError, match="prompt must be one of"):
        retailopt.agent_prompt(row, "short")


def test_a_rows_own_schema_prompt_is_used_when_it_has_one(retail_rows):
    row = dict(retail_rows[0], prompt_schema="[SCENARIO]\nmine\n\n[DATA]\nsee data.json\n\n[OUTPUT FORMAT]\ngurobi")
    assert retailopt.agent_prompt(row, "schema") == "[SCENARIO]\nmine\n\n[DATA]\nsee data.json"


def test_import_and_export_from_the_command_line(tmp_path, retail_v0):
    rows = tmp_path / "rows.jsonl"
    result = CliRunner().invoke(main, ["import", "retailopt", str(retail_v0), "--out", str(rows)])
    assert result.exit_code == 0 and "imported 38 scenarios" in result.output
    out = tmp_path / "tasks"
    result = CliRunner().invoke(main, ["export", "--dataset", str(rows), "--out", str(out), "--prompt", "schema"])
    assert result.exit_code == 0, result.output
    tasks = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert len(tasks) == 38 and "retailopt-retail-f1-base-v0" in tasks
    task = out / "retailopt-retail-f1-base-v0"
    data = json.loads((task / "environment" / "files" / "data.json").read_text())
    assert data["periods"] == 20 and "COPY files/ /app/" in (task / "environment" / "Dockerfile").read_text()
    config = contract.load(str(task / "tests"))
    assert config.expected == {"status": "OPTIMAL", "objective": 378951.5, "rel_tol": 1e-4}
    assert config.run == contract.ProgramRun(
        python="/usr/local/bin/python3",
        uid=65534,
        limits=Limits(solve_time_limit_s=60.0, memory_mb=2048),
        argv=("model.py", "data.json", "answer.json"),
        data="data.json",
        output="answer.json",
    )
    assert config.deliverables == ("/app/model.py",)
    assert json.loads((task / "tests" / "data.json").read_text()) == data
    instruction = " ".join((task / "instruction.md").read_text().split())
    assert "378951" not in instruction and "tolerance of 0.0001" in instruction
    assert "python3 -I model.py data.json answer.json" in instruction and "**60 seconds**" in instruction


def test_full_prompt_tasks_ship_no_data_file(exported_retail):
    task = exported_retail["separate"] / "retailopt-retail-f1-base-v0"
    assert not (task / "environment" / "files").exists()
    assert "COPY" not in (task / "environment" / "Dockerfile").read_text()
    assert '"periods": 20' in (task / "instruction.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["separate", "shared"])
@pytest.mark.sandbox
def test_check_runs_the_retail_model_as_oracle(exported_retail, mode):
    tasks = [
        exported_retail[mode] / f"retailopt-{s.replace('_', '-')}{suffix}"
        for s in QUICK_RETAIL
        for suffix in ("", "-schema")
    ]
    for task in tasks:
        [result] = check.check_tasks(task, jobs=2, attacks=mode == "shared" and task == tasks[0])
        assert result.ok, (task.name, result.problem_text())
        rewards = {p.policy: p.reward for p in result.policies}
        assert (rewards["oracle"], rewards["naive"], rewards["nothing"]) == (1.0, 0.0, 0.0)


def test_metrics_over_a_folder_of_answers(tmp_path, retail_rows):
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in retail_rows[:3]))
    answers = tmp_path / "answers"
    answers.mkdir()
    first, second = retail_rows[0], retail_rows[1]
    (answers / f"{first['scenario_id']}.json").write_text(
        json.dumps({"status": "OPTIMAL", "objective": first["reference_objective"]})
    )
    (answers / second["scenario_id"]).mkdir()
    (answers / second["scenario_id"] / "answer.json").write_text('{"status": "OPTIMAL", "objective": 1}')
    result = CliRunner().invoke(main, ["metrics", str(answers), "--rows", str(rows_file), "--format", "json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)["modelling"]["by_difficulty"]
    assert (row["agent"], row["source"], row["trials"]) == ("answers", "retailopt", 3)
    assert (row["execution_rate"], row["accuracy"], row["silent_failure_rate"]) == (2 / 3, 1 / 3, 1 / 3)


def test_metrics_with_nothing_to_count_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["metrics", str(tmp_path)])
    assert result.exit_code == 1 and "no modelling trials of orharbor tasks" in result.output
