"""Write one Harbor task directory per modelling spec or RetailOpt row.

::

    <task-id>/
      task.toml             metadata (kind = modelling, source, difficulty or archetype, tags)
      instruction.md        the problem in words, what to hand in, environment, scoring
      environment/
        Dockerfile          pinned python slim image with the modelling stack; /app
        files/              the spec's data files, or data.json (schema prompt)
      tests/                uploaded only after the agent has finished
        test.sh, verify.py  the standard-library grader, its modules in orharbor.zip
        task.json           the expected outputs, or the reference status and objective and how
                            model.py is run (RetailOpt: run)
        data.json           RetailOpt: the scenario's data, handed to the agent's model.py
        Dockerfile          separate verifier mode: the verifier image, tests baked in (RetailOpt:
                            with the modelling stack, which model.py runs under)
      solution/
        solve.sh            the oracle: runs the golden script in /app, or hands in the retail model
        model.py            RetailOpt: orharbor's retail model, its time limit set for the task
        naive/              a wrong answer (well-formed, one value off), as it would sit in /app
                            (RetailOpt: a model.py that writes it)

A RetailOpt task grades no file the agent typed: the verifier copies the agent's
``/app/model.py`` into a fresh private folder with ``tests/data.json`` as
``data.json``, runs ``python3 -I model.py data.json answer.json`` there under the
task's limits (:func:`retail_limits`) and grades the ``answer.json`` that run writes.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

from orharbor.exporter.task_dir import (
    ExportOptions,
    build_task,
    copy_template,
    fresh_task,
    network_text,
    render,
    seal,
    task_toml,
    time_up_text,
    write_json,
    write_task_toml,
    write_tests,
)
from orharbor.image_facts import AGENT_APT_PACKAGES, AGENT_USER, MODELLING_PACKAGES, SOLVER_UID
from orharbor.modelling import retailopt
from orharbor.modelling.spec import Spec
from orharbor.verifiers import contract
from orharbor.verifiers.modelling import STATUSES
from orharbor.verifiers.solver_run import Limits

PACKAGES_TEXT = "ortools, pyomo, highspy (HiGHS), numpy and scipy"
DEFAULT_AGENT_TIMEOUT_S = 1800.0
RETAIL_DELIVERABLES = tuple(path for path in (contract.KINDS["retail"].deliverable,) if path is not None)  # model.py
#: The interpreter model.py runs under in the verifier: the image's own python3, which holds
#: MODELLING_PACKAGES (the agent image and, in separate mode, the retail verifier image).
RETAIL_PYTHON = "/usr/local/bin/python3"
#: How the verifier runs model.py, in a fresh folder holding model.py and data.json.
RETAIL_ARGV = ("model.py", "data.json", "answer.json")
#: Wall-clock seconds of the verifier's run of model.py: scenarios with continuous orders (LPs),
#: and those with integer orders (pack sizes, MOQ, fixed order cost: MIPs). Measured with
#: ``python3 -I model.py data.json answer.json`` on the 38 v0 scenarios (2-core machine, one
#: run at a time): the 35 LPs take 0.4 to 1.2 s with the interpreter's start, the three MIPs
#: use all of the retail model's own time limit and stop within 0.4 s of it.
RETAIL_RUN_LIMIT_S = {"lp": 60.0, "integer": 360.0}
#: The time limit the oracle's copy of the retail model sets itself, inside the run's limit
#: (300 s: within it HiGHS proves the v0 pack-size plan within the references' 1% gap).
RETAIL_TIME_LIMIT_S = {"lp": 30.0, "integer": 300.0}
#: Address space of the run (the retail model peaks at 245 MB; importing the whole modelling
#: stack, pyomo, highspy, ortools, scipy, takes 430 MB).
RETAIL_MEMORY_MB = 2048
#: Verifier seconds beyond the run: start, lockdown of the container, reading and writing files.
RETAIL_VERIFIER_MARGIN_S = 120.0
HINT_MODES = ("none", "all")


def below_text(row: dict) -> str:
    """The scoring text's note for rows whose reference is a MIP plan within a gap (``below_tol``)."""
    if "below_tol" not in row:
        return ""
    cheaper = f", or up to {row['below_tol']:g} below it" if row["below_tol"] > row["rel_tol"] else ""
    return (
        f"{cheaper} (the reference is a plan proven within a {row['below_tol']:g} gap of the optimum, not "
        "the optimum itself: a cheaper plan is as correct, and a plan your model stopped at its time limit, "
        "status TIME_LIMIT, is graded on its objective as an OPTIMAL one is)"
    )


def export_spec(
    spec: Spec, out: Path, options: ExportOptions = ExportOptions(), hints: str = "none", force: bool = False
) -> Path:
    """The task of one validated spec; ``hints`` is ``none`` or ``all``.

    Built in a temporary folder in ``out`` and renamed into place; an existing
    task folder of the same id is replaced only with ``force`` (as ``export_row``).
    """
    if hints not in HINT_MODES:
        raise ValueError(f"hints must be one of {', '.join(HINT_MODES)}, got {hints!r}")
    return build_task(
        out, spec.id, lambda parent: _write_spec(spec, fresh_task(parent / spec.id), options, hints), force
    )


def _write_spec(spec: Spec, task: Path, options: ExportOptions, hints: str) -> Path:
    if spec.template is not None:
        shutil.copytree(spec.template, task / "environment" / "files")
    shutil.copyfile(spec.golden_script, task / "solution" / spec.golden_script.name)
    (task / "solution" / "solve.sh").write_text(render("solve_spec.sh", {"golden": spec.golden_script.name}))
    (task / "solution" / "solve.sh").chmod(0o755)
    metadata = {
        "kind": "modelling",
        "source": "spec",
        "spec": spec.id,
        "difficulty": spec.difficulty,
        "tags": ["operations-research", "modelling", *spec.tags],
    }
    statement = spec.description
    if hints == "all" and spec.hints:
        statement += "\n\n## Hints\n\n" + "\n".join(f"- {h['text'].strip()}" for h in spec.hints)
    if spec.data_files:
        listed = ", ".join(f"`/app/{name}`" for name in spec.data_files)
        statement += f"\n\n## Data files\n\n{listed}"
    contract_task = contract.SpecTask(
        task_id=spec.id,
        deliverables=tuple(f"/app/{name}" for name in spec.outputs),
        metadata=metadata,
        outputs=spec.outputs,
    )
    _write_common(
        task,
        contract_task,
        title=spec.id.replace("_", " ").capitalize(),
        statement=statement,
        options=options,
        has_files=spec.template is not None,
        deliverable_text=_outputs_text(spec.outputs),
        scoring_text=_outputs_scoring(spec.outputs),
        verifier_timeout_s=60.0,
    )
    return task


def export_retail(
    row: dict, out: Path, options: ExportOptions = ExportOptions(), prompt: str = "full", force: bool = False
) -> Path:
    """The task of one RetailOpt row, with the ``full`` (data in the text) or ``schema`` prompt.

    Built and replaced as :func:`export_spec` does.
    """
    return build_task(
        out, row["id"], lambda parent: _write_retail(row, fresh_task(parent / row["id"]), options, prompt), force
    )


def _write_retail(row: dict, task: Path, options: ExportOptions, prompt: str) -> Path:
    statement = retailopt.agent_prompt(row, prompt)
    if prompt == "schema":
        (task / "environment" / "files").mkdir()
        write_json(task / "environment" / "files" / "data.json", row["data"])
    write_json(task / "tests" / "data.json", row["data"])
    wall_s, oracle_s = retail_limits(row["data"])
    (task / "solution" / "model.py").write_text(oracle_model(oracle_s))
    copy_template("solve_retail.sh", task / "solution" / "solve.sh", executable=True)
    run = contract.ProgramRun(
        python=RETAIL_PYTHON,
        uid=SOLVER_UID,
        limits=Limits(solve_time_limit_s=wall_s, memory_mb=RETAIL_MEMORY_MB),
        argv=RETAIL_ARGV,
        data="data.json",
        output=RETAIL_ARGV[2],
    )
    expected = retailopt.expected_answer(row)
    metadata = {
        "kind": "modelling",
        "source": "retailopt",
        "scenario_id": row["scenario_id"],
        "archetype": row["archetype"],
        "family": row["family"],
        "prompt": prompt,
        "run_time_limit_s": wall_s,
        "tags": ["operations-research", "modelling", "retail", row["family"].lower()],
    }
    if "source" in row:
        metadata["citation"] = row["source"]
    where = "in `/app/data.json`" if prompt == "schema" else "in the [DATA] section above"
    same = "a copy of `/app/data.json`" if prompt == "schema" else "the JSON object of the [DATA] section"
    deliverable_text = (
        f"Build an optimisation model of this scenario from the data {where}, and hand in "
        "`/app/model.py`: one self-contained Python program that reads the scenario's data, builds and "
        "solves the model, and writes the result. When you finish, or when your time is up, the "
        "`/app/model.py` you have at that moment is copied into a fresh, empty folder together with "
        f"the scenario's data as `data.json` ({same}) and run there once, as\n\n"
        f"    python3 -I {' '.join(RETAIL_ARGV)}\n\n"
        "It must write its result to the path given as its second argument, as "
        '`{"status": "OPTIMAL", "objective": 12345.6}`, within '
        f"**{wall_s:g} seconds** of wall-clock time (CPU time, summed over threads, is capped at the "
        f"same) and {RETAIL_MEMORY_MB} MB of memory. It runs as an unprivileged user with no network, "
        f"under the image's `python3` with the standard library and {PACKAGES_TEXT}; nothing else you "
        "install is visible to it and no other file of yours is copied. Stop well inside the time "
        "limit: give your solver a time limit below it.\n\n"
        f"`status` is one of {', '.join(STATUSES)} (OPTIMAL: solved to optimality; with integer "
        "decisions, proven within a 1% relative gap, the setting the reference was solved with); "
        "`objective` is the optimal objective value "
        "(a JSON number), or null when there is none. Implement the business description and its key "
        "equations exactly as written.\n\n"
        "Only the answer this run writes is graded: an `/app/answer.json` you write yourself is never "
        "read (write one while you develop if it helps), so the answer must come from your model."
    )
    scoring_text = (
        "The answer your `/app/model.py` writes in that run is compared with the reference solution: the "
        "status must equal the reference status and the objective must be within a relative tolerance of "
        f"{row['rel_tol']:g} of the reference objective{below_text(row)}. Reward 1.0 if both hold, else 0.0 (also when "
        "`/app/model.py` is missing, crashes before writing its answer, overruns its time or memory "
        "limit, or writes a malformed answer)."
    )
    contract_task = contract.RetailTask(
        task_id=row["id"], deliverables=RETAIL_DELIVERABLES, metadata=metadata, expected=expected, run=run
    )
    _write_common(
        task,
        contract_task,
        title=f"Retail operations model: {row['scenario_id']}",
        statement=statement,
        options=options,
        has_files=prompt == "schema",
        deliverable_text=deliverable_text,
        scoring_text=scoring_text,
        verifier_timeout_s=wall_s + RETAIL_VERIFIER_MARGIN_S,
        verifier_packages=MODELLING_PACKAGES,
        time_up_what="`/app/model.py`",
    )
    return task


def retail_limits(data: dict) -> tuple[float, float]:
    """(wall-clock limit of the verifier's run of model.py, the oracle model's own time limit) of a scenario.

    A scenario whose orders are integer (pack sizes, a minimum order quantity, a
    fixed order cost: a MIP, as the retail model reads the data) gets the long
    limit; data the retail model cannot read too, to be safe.
    """
    kind = "lp" if retailopt.order_kind(data) == "lp" else "integer"
    return RETAIL_RUN_LIMIT_S[kind], RETAIL_TIME_LIMIT_S[kind]


def oracle_model(time_limit_s: float) -> str:
    """orharbor's retail model as the oracle hands it in: its default time limit set to ``time_limit_s``.

    The verifier runs it as ``python3 -I model.py data.json answer.json``, with
    no ``--time-limit``, so the limit must be its default.
    """
    from orharbor.modelling.retail import model as retail_model

    source = Path(retail_model.__file__).read_text(encoding="utf-8")
    source, found = re.subn(
        r"^DEFAULT_TIME_LIMIT_S = .*$",
        f"DEFAULT_TIME_LIMIT_S = {float(time_limit_s)!r}",
        source,
        count=1,
        flags=re.MULTILINE,
    )
    if found != 1:
        raise RuntimeError(f"{retail_model.__file__}: no DEFAULT_TIME_LIMIT_S line to set")
    return source


def _write_common(
    task: Path,
    contract_task: contract.SpecTask | contract.RetailTask,
    *,
    title: str,
    statement: str,
    options: ExportOptions,
    has_files: bool,
    deliverable_text: str,
    scoring_text: str,
    verifier_timeout_s: float,
    verifier_packages: tuple[str, ...] = (),
    time_up_what: str = "your answer files in `/app`",
) -> None:
    """What every modelling task shares: tests, Dockerfiles, task.toml, solution/naive/ and instruction.md.

    ``verifier_packages`` are pip-installed into the separate verifier image's
    python3 (RetailOpt: the modelling stack model.py runs under; specs: none,
    their grading reads files only).
    """
    task_id, metadata = contract_task.task_id, contract_task.metadata
    assert metadata is not None  # both callers build the task with its metadata
    write_tests(task / "tests", replace(contract_task, reward_scale=options.reward_scale))
    if options.verifier_mode == "separate":
        install = (
            f"# The modelling stack the agent's model.py runs under, pinned as in the agent image.\n"
            f"RUN pip install --no-cache-dir {' '.join(verifier_packages)}"
            if verifier_packages
            else ""
        )
        (task / "tests" / "Dockerfile").write_text(
            render(
                "modelling_verifier.Dockerfile",
                {"task_id": task_id, "base_image": options.base_image, "install_lines": install},
            )
        )
    (task / "environment" / "Dockerfile").write_text(
        render(
            "modelling.Dockerfile",
            {
                "task_id": task_id,
                "base_image": options.base_image,
                "apt_packages": " ".join(AGENT_APT_PACKAGES),
                "modelling_packages": " ".join(MODELLING_PACKAGES),
                "agent_user": AGENT_USER,
                "copy_lines": "COPY files/ /app/" if has_files else "",
            },
        )
    )
    agent_timeout_s = options.agent_timeout_s or DEFAULT_AGENT_TIMEOUT_S
    config = task_toml(
        task_id,
        title,
        metadata,
        options,
        agent_timeout_s=agent_timeout_s,
        verifier_timeout_s=verifier_timeout_s,
        artifacts=list(contract_task.deliverables),
    )
    write_task_toml(task, config)
    write_naive(task / "solution" / "naive", contract_task)
    (task / "instruction.md").write_text(
        render(
            "modelling_instruction.md",
            {
                "title": title,
                "statement": statement.strip(),
                "deliverable_text": deliverable_text,
                "agent_minutes": f"{agent_timeout_s / 60:g}",
                "time_up_text": time_up_text(time_up_what),
                "packages_text": PACKAGES_TEXT,
                "network_text": network_text(options),
                "scoring_text": scoring_text,
            },
        )
    )
    seal(task / "tests", config)


def write_naive(naive: Path, task: contract.SpecTask | contract.RetailTask) -> None:
    """solution/naive/: the wrong answer's files, at their paths relative to /app (expected reward 0.0)."""
    for name, data in wrong_answer(task).items():
        (naive / name).parent.mkdir(parents=True, exist_ok=True)
        (naive / name).write_bytes(data)


def wrong_answer(task: contract.SpecTask | contract.RetailTask) -> dict[str, bytes]:
    """Well-formed answer files that miss the expected values (the last output, or the objective).

    Keys are paths relative to /app. The answer is right in shape and wrong in
    one value, so it must score 0.0 with ``executed`` 1 and ``correct`` 0: the
    silent failure a modelling benchmark is meant to catch. A RetailOpt task
    grades what its model.py writes, so there it is a model.py that writes
    the wrong answer.
    """
    if isinstance(task, contract.RetailTask):
        expected = task.expected
        objective = expected["objective"] if expected["objective"] is not None else 0.0
        answer = {"status": expected["status"], "objective": objective * (1 + 100 * expected["rel_tol"]) + 1.0}
        if expected["status"] != "OPTIMAL":
            answer = {"status": "OPTIMAL", "objective": 0.0}
        return {task.deliverable.removeprefix("/app/"): answer_program(json.dumps(answer).encode()).encode()}
    files = {}
    names = list(task.outputs)
    for name in names:
        expected = task.outputs[name]
        right = expected["text"] if "text" in expected else repr(expected["value"])
        if name == names[-1]:
            right = (
                expected["text"] + "0"
                if "text" in expected
                else repr(expected["value"] * (1 + 100 * expected["rel_tol"]) + 100 * expected["abs_tol"] + 1)
            )
        files[name] = (right + "\n").encode()
    return files


def answer_program(answer: bytes) -> str:
    """A model.py that writes the bytes ``answer`` to the path of its second argument, and does nothing else.

    What a blind guess looks like in code: it never reads the data.
    """
    return f'import sys\n\nANSWER = {answer!r}\n\nwith open(sys.argv[2], "wb") as f:\n    f.write(ANSWER)\n'


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
            rules.append(
                f"- `{name}`: a single number, within a relative tolerance of {expected['rel_tol']:g} "
                f"(or an absolute one of {expected['abs_tol']:g})"
            )
    return (
        "Each file is compared with the known optimal answer:\n\n"
        + "\n".join(rules)
        + "\n\nReward 1.0 if every file matches, else 0.0 (also for a missing or malformed file)."
    )
