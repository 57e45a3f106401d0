"""Write one Harbor task directory per modelling spec or RetailOpt row.

::

    <task-id>/
      task.toml             metadata (kind = modelling, source, difficulty or archetype, tags)
      instruction.md        the problem in words, what to hand in, environment, scoring
      environment/
        Dockerfile          pinned python slim image with the modelling stack; /app
        files/              the spec's data files, or data.json (schema prompt)
      tests/                uploaded only after the agent has finished
        test.sh, verify.py  the standard-library grader (orharbor/verifiers/...)
        task.json           the expected outputs, or the reference status and objective
        Dockerfile          separate verifier mode: the verifier image, tests baked in
      solution/
        solve.sh            the oracle: the golden script, or the retail model, run in /app
        naive/              a wrong answer (well-formed, one value off), as it would sit in /app
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import tomli_w

from orharbor.exporter.bundle import write_bundle
from orharbor.exporter.harbor import (AGENT_APT_PACKAGES, AGENT_USER, ExportOptions, copy_template, network_text,
                                      render, seal, task_toml, time_up_text, write_json, write_test_sh)
from orharbor.modelling.spec import Spec
from orharbor.verifiers.modelling import STATUSES

#: The modelling stack of the agent image, pinned (numpy and scipy as in the algorithm tasks).
MODELLING_PACKAGES = ("ortools==9.15.6755", "pyomo==6.10.1", "highspy==1.16.0", "numpy==2.2.6", "scipy==1.15.3")
PACKAGES_TEXT = "ortools, pyomo, highspy (HiGHS), numpy and scipy"
DEFAULT_AGENT_TIMEOUT_S = 1800.0
RETAIL_DELIVERABLES = ("/app/answer.json", "/app/model.py")
#: Seconds the retail model may spend on one scenario when the oracle runs.
RETAIL_TIME_LIMIT_S = 300.0
HINT_MODES = ("none", "all")


def export_spec(spec: Spec, out: Path, options: ExportOptions = ExportOptions(), hints: str = "none") -> Path:
    """The task of one validated spec; ``hints`` is ``none`` or ``all``."""
    if hints not in HINT_MODES:
        raise ValueError(f"hints must be one of {', '.join(HINT_MODES)}, got {hints!r}")
    task = _fresh(out / spec.id)
    if spec.template is not None:
        shutil.copytree(spec.template, task / "environment" / "files")
    shutil.copyfile(spec.golden_script, task / "solution" / spec.golden_script.name)
    (task / "solution" / "solve.sh").write_text(render("solve_spec.sh", {"golden": spec.golden_script.name}))
    (task / "solution" / "solve.sh").chmod(0o755)
    deliverables = [f"/app/{name}" for name in spec.outputs]
    grading = {"type": "outputs", "outputs": spec.outputs}
    metadata = {"kind": "modelling", "source": "spec", "spec": spec.id, "difficulty": spec.difficulty,
                "tags": ["operations-research", "modelling", *spec.tags]}
    statement = spec.description
    if hints == "all" and spec.hints:
        statement += "\n\n## Hints\n\n" + "\n".join(f"- {h['text'].strip()}" for h in spec.hints)
    if spec.data_files:
        listed = ", ".join(f"`/app/{name}`" for name in spec.data_files)
        statement += f"\n\n## Data files\n\n{listed}"
    _write_common(task, spec.id, title=spec.id.replace("_", " ").capitalize(), statement=statement,
                  deliverables=deliverables, grading=grading, metadata=metadata, options=options,
                  has_files=spec.template is not None, deliverable_text=_outputs_text(spec.outputs),
                  scoring_text=_outputs_scoring(spec.outputs), verifier_timeout=60.0)
    return task


def export_retail(row: dict, out: Path, options: ExportOptions = ExportOptions(), prompt: str = "full") -> Path:
    """The task of one RetailOpt row, with the ``full`` (data in the text) or ``schema`` prompt."""
    from orharbor.modelling import retailopt
    from orharbor.modelling.retail import model as retail_model

    statement = retailopt.agent_prompt(row, prompt)
    task = _fresh(out / row["id"])
    if prompt == "schema":
        (task / "environment" / "files").mkdir()
        write_json(task / "environment" / "files" / "data.json", row["data"])
    write_json(task / "solution" / "data.json", row["data"])
    shutil.copyfile(retail_model.__file__, task / "solution" / "retail_model.py")
    (task / "solution" / "solve.sh").write_text(render("solve_retail.sh", {"time_limit": f"{RETAIL_TIME_LIMIT_S:g}"}))
    (task / "solution" / "solve.sh").chmod(0o755)
    grading = {"type": "answer", "answer": RETAIL_DELIVERABLES[0], "status": row["reference_status"],
               "objective": row["reference_objective"], "rel_tol": row["rel_tol"]}
    metadata = {"kind": "modelling", "source": "retailopt", "scenario_id": row["scenario_id"],
                "archetype": row["archetype"], "family": row["family"], "prompt": prompt,
                "tags": ["operations-research", "modelling", "retail", row["family"].lower()]}
    if "source" in row:
        metadata["citation"] = row["source"]
    where = "in `/app/data.json`" if prompt == "schema" else "in the [DATA] section above"
    deliverable_text = (
        f"Build an optimisation model of this scenario from the data {where}, solve it, and hand in two files:\n\n"
        "- `/app/model.py`: your model code (Python);\n"
        "- `/app/answer.json`: the result, as `{\"status\": \"OPTIMAL\", \"objective\": 12345.6}`.\n\n"
        f"`status` is one of {', '.join(STATUSES)} (OPTIMAL: solved to optimality; with integer "
        "decisions, proven within a 1% relative gap, the setting the reference was solved with); "
        "`objective` is the optimal objective value "
        "(a JSON number), or null when there is none. Implement the business description and its key "
        "equations exactly as written.")
    scoring_text = (
        "`/app/answer.json` is compared with the reference solution: the status must "
        f"equal the reference status and the objective must be within a relative tolerance of "
        f"{row['rel_tol']:g} of the reference objective. Reward 1.0 if both hold, else 0.0 (also for a "
        f"missing or malformed answer).")
    _write_common(task, row["id"], title=f"Retail operations model: {row['scenario_id']}", statement=statement,
                  deliverables=list(RETAIL_DELIVERABLES), grading=grading, metadata=metadata, options=options,
                  has_files=prompt == "schema", deliverable_text=deliverable_text, scoring_text=scoring_text,
                  verifier_timeout=60.0, oracle_timeout=RETAIL_TIME_LIMIT_S + 120.0)
    return task


def _fresh(task: Path) -> Path:
    if task.exists():
        shutil.rmtree(task)
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    return task


def _write_common(task: Path, task_id: str, *, title: str, statement: str, deliverables: list[str],
                  grading: dict, metadata: dict, options: ExportOptions, has_files: bool, deliverable_text: str,
                  scoring_text: str, verifier_timeout: float, oracle_timeout: float = 0.0) -> None:
    """What every modelling task shares: tests, Dockerfiles, task.toml, solution/naive/ and instruction.md."""
    write_bundle(None, task / "tests")
    copy_template("verify.py", task / "tests" / "verify.py")
    write_test_sh(task / "tests", modelling=True)
    write_json(task / "tests" / "task.json", {"kind": "modelling", "task_id": task_id,
                                              "deliverables": deliverables, "grading": grading})
    if options.verifier_mode == "separate":
        (task / "tests" / "Dockerfile").write_text(render("modelling_verifier.Dockerfile", {
            "task_id": task_id, "base_image": options.base_image}))
    (task / "environment" / "Dockerfile").write_text(render("modelling.Dockerfile", {
        "task_id": task_id, "base_image": options.base_image, "apt_packages": " ".join(AGENT_APT_PACKAGES),
        "modelling_packages": " ".join(MODELLING_PACKAGES), "agent_user": AGENT_USER,
        "copy_lines": "COPY files/ /app/" if has_files else ""}))
    agent_timeout = max(options.agent_timeout_s or DEFAULT_AGENT_TIMEOUT_S, oracle_timeout)
    config = task_toml(task_id, title, metadata, options, agent_timeout=agent_timeout,
                       verifier_timeout=verifier_timeout, artifacts=deliverables)
    (task / "task.toml").write_text(tomli_w.dumps(config))
    write_naive(task / "solution" / "naive", grading)
    (task / "instruction.md").write_text(render("modelling_instruction.md", {
        "title": title, "statement": statement.strip(), "deliverable_text": deliverable_text,
        "agent_minutes": f"{agent_timeout / 60:g}", "time_up_text": time_up_text("your answer files in `/app`"),
        "packages_text": PACKAGES_TEXT, "network_text": network_text(options), "scoring_text": scoring_text}))
    seal(task / "tests")


def write_naive(naive: Path, grading: dict) -> None:
    """solution/naive/: the wrong answer's files, at their paths relative to /app (expected reward 0.0)."""
    for name, data in wrong_answer(grading).items():
        (naive / name).parent.mkdir(parents=True, exist_ok=True)
        (naive / name).write_bytes(data)


def wrong_answer(grading: dict) -> dict[str, bytes]:
    """Well-formed answer files that miss the expected values (the last output, or the objective).

    Keys are paths relative to /app. The answer is right in shape and wrong in
    one value, so it must score 0.0 with ``executed`` 1 and ``correct`` 0: the
    silent failure a modelling benchmark is meant to catch.
    """
    if grading["type"] == "answer":
        objective = grading["objective"] if grading["objective"] is not None else 0.0
        answer = {"status": grading["status"], "objective": objective * (1 + 100 * grading["rel_tol"]) + 1.0}
        if grading["status"] != "OPTIMAL":
            answer = {"status": "OPTIMAL", "objective": 0.0}
        return {grading["answer"].removeprefix("/app/"): json.dumps(answer).encode()}
    files = {}
    names = list(grading["outputs"])
    for name in names:
        expected = grading["outputs"][name]
        right = expected["text"] if "text" in expected else repr(expected["value"])
        if name == names[-1]:
            right = (expected["text"] + "0" if "text" in expected
                     else repr(expected["value"] * (1 + 100 * expected["rel_tol"]) + 100 * expected["abs_tol"] + 1))
        files[name] = (right + "\n").encode()
    return files


def _outputs_text(outputs: dict[str, dict]) -> str:
    lines = ["Write these files in `/app` (the text of each as the description above asks):", ""]
    lines += [f"- `/app/{name}`" for name in outputs]
    return "\n".join(lines)


def _outputs_scoring(outputs: dict[str, dict]) -> str:
    rules = []
    for name, expected in outputs.items():
        if "text" in expected:
            rules.append(f"- `{name}`: exact text, after trimming leading and trailing whitespace")
        else:
            rules.append(f"- `{name}`: a single number, within a relative tolerance of {expected['rel_tol']:g} "
                         f"(or an absolute one of {expected['abs_tol']:g})")
    return ("Each file is compared with the known optimal answer:\n\n" + "\n".join(rules)
            + "\n\nReward 1.0 if every file matches, else 0.0 (also for a missing or malformed file).")

