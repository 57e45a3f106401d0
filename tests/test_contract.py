"""The problem contract, checked for every registered problem class (the idea of Gymnasium's ``check_env``).

Every property here is parametrized over ``problem_modules.names()``, so a new
class is tested by adding its folder and its registry line (tests/test_new_class.py
proves it with a toy class); tests/problems/ holds only what is particular to one class.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.datasets.rows import read_rows, shipped_datasets
from orharbor.exporter import ExportOptions
from orharbor.exporter.algorithm import instruction
from orharbor.jsonio import digest
from orharbor.problem_modules.checks import InvalidInstance
from orharbor.problem_modules.contract import MEMBERS, ProblemClass
from orharbor.verifiers.reward import FAIL
from orharbor.verifiers.score import judge

NAMES = problem_modules.names()
#: Keys every instance may carry that describe where it comes from, not the problem.
PROVENANCE = ("problem", "name", "generator", "source", "layout")
#: The sections every statement has, in this order.
SECTIONS = (
    "## Instance (JSON)",
    "## Solution (JSON)",
    "## Feasibility rules",
    "## Objective",
    "## How instances are generated",
)
#: What rules.py may import besides the standard library.
CHECKS = ("orharbor.verifiers", "orharbor.problem_modules.checks")
#: Files no reader may accept, each of which a reader must reject naming the file.
BROKEN_FILES = {
    "empty": lambda text: "",
    "blank": lambda text: "\n \n",
    "garbage": lambda text: "this is not a benchmark file\n",
    "binary": lambda text: "\x00\x01\x02",
    "first line only": lambda text: text.split("\n")[0] + "\n",
    "trailing garbage": lambda text: text + "@@ garbage @@\n",
    "last line twice": lambda text: text + text.splitlines()[-1] + "\n",
}


def _in_child(name: str, code: str) -> str:
    """Run ``code`` in a fresh interpreter with ``name`` registered as here (``p`` is the registry); its stdout."""
    setup = f"from orharbor import problem_modules as p; p.PROBLEMS[{name!r}] = {problem_modules.PROBLEMS[name]!r}; "
    env = dict(os.environ, PYTHONHASHSEED="12345")
    return subprocess.run(
        [sys.executable, "-c", setup + code], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()


def _imports(source: Path) -> list[str]:
    """The absolute modules a Python file imports."""
    roots = []
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            roots += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots.append(node.module)
    return roots


@pytest.fixture(scope="module", params=NAMES)
def solved(request):
    """A smoke instance of each class with its baseline and a short reference run."""
    module = problem_modules.get(request.param)
    instance = module.generate(7, module.SIZES[0])
    solution, meta = module.reference(instance, time_limit_s=2.0, workers=1)
    return module, instance, solution, meta, module.baseline(instance)


# ------------------------------------------------------------------ the class


@pytest.mark.parametrize("name", NAMES)
def test_class_satisfies_the_protocol(name):
    """Every contract member exists with its type; the class answers to its registry name."""
    module = problem_modules.get(name)
    assert isinstance(module, ProblemClass)
    assert [member for member in MEMBERS if not hasattr(module, member)] == []
    assert module.NAME == name
    for text in (module.TITLE, module.OBJECTIVE, module.BASELINE):
        assert isinstance(text, str) and text.strip()
    assert isinstance(module.SIZES, tuple) and len(set(module.SIZES)) == len(module.SIZES) >= 2
    assert isinstance(module.FORMATS, tuple) and module.FORMATS and all(isinstance(f, str) for f in module.FORMATS)
    assert type(module.GENERATOR_VERSION) is int and module.GENERATOR_VERSION >= 1
    for member in ("generate", "read", "write", "evaluate", "baseline", "reference", "statement", "validate_instance"):
        assert callable(getattr(module, member)), member


@pytest.mark.parametrize("name", NAMES)
def test_statement_describes_the_class(name):
    """The statement has the standard sections, names the objective and every field of an instance."""
    module = problem_modules.get(name)
    text = module.statement()
    lines = text.splitlines()
    assert lines[0].startswith("# ") and lines[0].endswith(f"(minimise the {module.OBJECTIVE})")
    headings = [line for line in lines if line.startswith("## ")]
    found = [next((i for i, heading in enumerate(headings) if heading.startswith(s)), None) for s in SECTIONS]
    assert None not in found and found == sorted(found), headings
    instance = module.generate(0, module.SIZES[0])
    unnamed = [key for key in instance if key not in PROVENANCE and f"`{key}`" not in text]
    assert unnamed == [], "fields the statement does not name"
    assert len(lines) <= 120


# ----------------------------------------------------------------- generator


@pytest.mark.parametrize("name", NAMES)
def test_generate_rejects_bad_arguments(name):
    """Bad seeds and unknown sizes raise ValueError listing the valid sizes."""
    module = problem_modules.get(name)
    message = re.escape("valid sizes: " + ", ".join(module.SIZES))
    for seed in (-1, True, 1.0, "1", 2**64, None):
        with pytest.raises(ValueError, match=message):
            module.generate(seed, module.SIZES[0])
    for size in ("no-such-size", module.SIZES[0].upper(), module.SIZES[0] + "0", 8, None):
        if size not in module.SIZES:
            with pytest.raises(ValueError, match=message):
                module.generate(0, size)


@pytest.mark.parametrize("name", NAMES)
def test_golden_digests_pin_the_generator(name):
    """generator.py pins generate's output: GOLDEN maps (seed, size) to the sha256 of the instance JSON."""
    module = problem_modules.get(name)
    golden = getattr(problem_modules.part(name, "generator"), "GOLDEN", None)
    assert golden, f"{name}: generator.py has no GOLDEN digests"
    for (seed, size), expected in golden.items():
        assert size in module.SIZES
        assert digest(module.generate(seed, size)) == expected, (seed, size)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_identical_bytes_in_another_process(name):
    """generate(seed, size) is a pure function: same digest here and in a fresh interpreter."""
    module = problem_modules.get(name)
    here = [digest(module.generate(seed, size)) for seed in (0, 1) for size in module.SIZES[:3]]
    there = _in_child(
        name,
        "from orharbor.jsonio import digest; m = p.get(%r); "
        "print([digest(m.generate(s, z)) for s in (0, 1) for z in m.SIZES[:3]])" % name,
    )
    assert repr(here) == there
    assert len(set(here)) == len(here), "different seeds or sizes must give different instances"


@pytest.mark.parametrize("name", NAMES)
def test_generated_instances_follow_their_own_rules(name):
    """Generated instances are plain JSON of their class and pass validate_instance; garbage does not."""
    module = problem_modules.get(name)
    for size in module.SIZES[:3]:
        for seed in (0, 1):
            instance = module.generate(seed, size)
            assert instance["problem"] == name and json.loads(json.dumps(instance)) == instance
            assert module.validate_instance(instance) is instance
    for garbage in (None, [], [instance], {}, {"problem": name}):
        with pytest.raises(InvalidInstance):
            module.validate_instance(garbage)


# ------------------------------------------------------------------- formats


@pytest.mark.parametrize("name", NAMES)
def test_generated_instances_round_trip_through_every_format(name, tmp_path):
    """read(write(x)) gives back every field but the name, in canonical layout, from the text or from a file."""
    module = problem_modules.get(name)
    for seed, size in enumerate(module.SIZES[:3]):
        instance = module.generate(seed, size)
        data = {key: value for key, value in instance.items() if key not in ("name", "generator")}
        for fmt in module.FORMATS:
            text = module.write(instance, fmt)
            back = module.read(text, fmt)
            assert "layout" not in back and {key: back[key] for key in data} == data, (size, fmt)
            assert module.write(back, fmt) == text
            assert module.read(text) == back  # the default format, or the sniffed one
            path = tmp_path / f"{name}-{size}.{fmt}"
            path.write_text(text, encoding="utf-8", newline="")
            from_file = module.read(path, fmt)
            assert from_file["source"] == path.name and {key: from_file[key] for key in data} == data


@pytest.mark.parametrize("damage", BROKEN_FILES)
@pytest.mark.parametrize("name", NAMES)
def test_broken_files_are_rejected_naming_the_file(name, damage, tmp_path):
    """Every reader refuses an empty, blank, garbage, truncated or overlong file with a message naming it."""
    module = problem_modules.get(name)
    instance = module.generate(0, module.SIZES[0])
    for fmt in module.FORMATS:
        path = tmp_path / f"broken.{fmt}"
        path.write_text(BROKEN_FILES[damage](module.write(instance, fmt)), encoding="utf-8", newline="")
        with pytest.raises(ValueError) as caught:
            module.read(path, fmt)
        assert str(caught.value).startswith(path.name), str(caught.value)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_formats_and_missing_files_are_refused(name, tmp_path):
    """An unknown format is a ValueError naming the class; a missing file a FileNotFoundError."""
    module = problem_modules.get(name)
    instance = module.generate(0, module.SIZES[0])
    text = module.write(instance, module.FORMATS[0])
    with pytest.raises(ValueError, match=f"unknown {name} format 'no-such-format'"):
        module.read(text, "no-such-format")
    with pytest.raises(ValueError, match=f"unknown {name} format 'no-such-format'"):
        module.write(instance, "no-such-format")
    with pytest.raises(FileNotFoundError, match=f"no such {name} file"):
        module.read(str(tmp_path / "missing" / "instance.txt"))


# ------------------------------------------------------ baseline and reference


@pytest.mark.parametrize("name", NAMES)
def test_baseline_is_feasible_and_deterministic(name):
    """The naive baseline passes the verifier and is the same answer every time."""
    module = problem_modules.get(name)
    for size in module.SIZES[:2]:
        instance = module.generate(11, size)
        answer = module.baseline(instance)
        assert module.evaluate(instance, answer) >= 0
        assert module.baseline(json.loads(json.dumps(instance))) == answer


def test_reference_and_baseline_pass_the_verifier(solved):
    """Both answers are feasible; the reference is no worse; the verifier agrees with the solver's meta."""
    module, instance, reference, meta, baseline = solved
    ref_obj, base_obj = module.evaluate(instance, reference), module.evaluate(instance, baseline)
    assert ref_obj <= base_obj
    assert meta["objective"] == ref_obj
    assert meta["bound"] <= ref_obj
    assert {"solver", "version", "status", "time_limit_s", "workers"} <= set(meta)
    json.dumps(meta)


def test_reference_starts_from_a_given_hint_and_is_never_worse(solved):
    """``hint=`` an answer no worse than the class's own start: it is the start, and the answer no worse than it.

    The hint is the reference's own earlier answer, never worse than its own
    start (recorded in ``meta["hint"]`` of the run without a hint); the
    caller's hint is left as it was.
    """
    module, instance, reference, meta, _ = solved
    own = meta["hint"]
    assert set(own) == {"from", "objective"} and own["from"] != "given"
    given = module.evaluate(instance, reference)
    hint = json.loads(json.dumps(reference))
    solution, warm = module.reference(instance, time_limit_s=0.5, workers=1, hint=hint)
    assert hint == reference
    assert module.evaluate(instance, solution) == warm["objective"] <= given
    if given <= own["objective"]:
        assert warm["hint"] == {"from": "given", "objective": given}
    else:  # never expected (the reference keeps its start or better), but then the own start must be better
        assert warm["hint"]["objective"] < given
    assert {"solver", "version", "status", "time_limit_s", "workers", "bound"} <= set(warm)
    json.dumps(warm)


@pytest.mark.parametrize(
    "garbage",
    [[], "x", float("nan"), {"unexpected": 1}, {"a": float("nan")}],
    ids=["list", "string", "nan", "unknown-key", "nan-value"],
)
def test_a_malformed_hint_is_ignored_with_a_note(solved, garbage):
    """A hint of the wrong shape is refused with a note, never an exception; the answer is still feasible."""
    module, instance, _, meta, _ = solved
    solution, got = module.reference(instance, time_limit_s=0.2, workers=1, hint=garbage)
    assert got["hint"]["from"] == meta["hint"]["from"] != "given"
    assert got["hint"]["note"].startswith("the given hint was ignored: ")
    assert module.evaluate(instance, solution) == got["objective"] <= got["hint"]["objective"]


@pytest.mark.parametrize("name", NAMES)
def test_the_instruction_names_the_class_s_own_reference_method(name):
    """REFERENCE is one line (a noun phrase the instruction ends a sentence with), and the instruction states it."""
    module = problem_modules.get(name)
    text = module.REFERENCE
    assert isinstance(text, str) and text == " ".join(text.split()) and 20 <= len(text) <= 300, text
    assert not text.endswith("."), "the instruction adds the full stop"
    row = {"problem": name, "level": 1, "size": module.SIZES[0], "reference_meta": {"time_limit_s": 7.5}}
    told = " ".join(instruction(module, row, ExportOptions()).split())
    assert f"reached in 7.5 seconds by the reference method: {text}." in told


@pytest.mark.parametrize("garbage", [None, [], "x", 3, {}, {"unexpected": 1}, [[0]], {"a": float("nan")}])
def test_corrupted_answers_score_minus_one(solved, garbage):
    """Answers of the wrong shape score -1.0 with a message from the task's verifier, never an exception."""
    module, instance, _, _, baseline = solved
    evaluate = importlib.import_module(problem_modules.verifier_module_name(module.NAME)).evaluate
    naive = evaluate(instance, baseline)
    result = judge(evaluate, instance, garbage, naive, naive - 1)
    assert result["reward"] == FAIL and result["feasible"] == 0 and result["error"]


# --------------------------------------------------------------- the folder


@pytest.mark.parametrize("name", NAMES)
def test_verifier_and_rules_import_only_the_standard_library(name):
    """verify.py is copied into task containers: stdlib and orharbor.verifiers only; rules.py adds the checks."""
    folder = Path(importlib.util.find_spec(problem_modules.verifier_module_name(name)).origin).parent
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    for module in _imports(folder / "verify.py"):
        assert module.split(".")[0] in allowed or module.startswith("orharbor.verifiers"), module
    for module in _imports(folder / "rules.py"):
        assert module.split(".")[0] in allowed or module.startswith(CHECKS), module


@pytest.mark.parametrize("name", NAMES)
def test_loading_a_class_does_not_load_ortools(name):
    """OR-Tools is imported inside baseline() or reference() only: exporting and verifying never need it."""
    assert _in_child(name, f"import sys; p.get({name!r}); print('ortools' in sys.modules)") == "False"


@pytest.mark.parametrize("name", NAMES)
def test_class_has_shipped_rows_for_both_levels(name):
    """The package ships smoke-size rows of both levels: the attack and check matrices of every class run on them."""
    path = next((p for p in shipped_datasets() if p.stem == name), None)
    assert path is not None, (
        f"no shipped dataset for {name}: run orharbor build-dataset --problem {name} ... "
        f"--out src/orharbor/datasets/data/{name}.jsonl, for level 1 and for level 2"
    )
    smoke = problem_modules.get(name).SIZES[0]
    levels = {row["level"] for row in read_rows(path) if row["problem"] == name and row["size"] == smoke}
    assert {1, 2} <= levels, (
        f"{path.name} has rows of the smoke size {smoke} at levels {sorted(levels)} only "
        "(tests/test_attacks.py attacks a smoke-size task of each level)"
    )


# ------------------------------------------------------------------ registry


def test_verifier_bundle_imports_only_the_standard_library():
    """Every file of orharbor/verifiers is stdlib-only too (they all ship in tests/)."""
    folder = Path(problem_modules.__file__).parent.parent / "verifiers"
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    for source in folder.glob("*.py"):
        for module in _imports(source):
            assert module.split(".")[0] in allowed or module.startswith("orharbor.verifiers"), source


def test_unknown_problem_suggests_the_closest_name():
    """A typo gets a did-you-mean."""
    with pytest.raises(problem_modules.UnknownProblem, match="did you mean 'jobshop'"):
        problem_modules.get("jobshp")
