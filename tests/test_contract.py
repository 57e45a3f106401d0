"""The problem-module contract of DESIGN.md, run over every registered problem class."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.jsonio import digest
from orharbor.verifiers.reward import FAIL
from orharbor.verifiers.score import evaluator, judge

NAMES = problem_modules.names()
CONTRACT = ("NAME", "TITLE", "OBJECTIVE", "SIZES", "BASELINE", "GENERATOR_VERSION", "FORMATS",
            "generate", "read", "write", "evaluate", "baseline", "reference", "statement", "validate_instance")


@pytest.fixture(scope="module", params=NAMES)
def solved(request):
    """A smoke instance of each class with its baseline and a short reference run."""
    module = problem_modules.get(request.param)
    instance = module.generate(7, module.SIZES[0])
    solution, meta = module.reference(instance, time_limit_s=2.0, workers=1)
    return module, instance, solution, meta, module.baseline(instance)


@pytest.mark.parametrize("name", NAMES)
def test_module_offers_the_whole_contract(name):
    """Every contract name exists; sizes, baseline text and statement are non-empty."""
    module = problem_modules.get(name)
    missing = [attr for attr in CONTRACT if not hasattr(module, attr)]
    assert not missing
    assert module.NAME == name and len(module.SIZES) >= 2 and module.BASELINE.strip()
    assert len(module.statement()) > 500 and isinstance(module.GENERATOR_VERSION, int)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_identical_bytes_in_another_process(name):
    """generate(seed, size) is a pure function: same digest here and in a fresh interpreter."""
    module = problem_modules.get(name)
    here = [digest(module.generate(seed, size)) for seed in (0, 1) for size in module.SIZES[:3]]
    code = (f"from orharbor import problem_modules as p; from orharbor.jsonio import digest; "
            f"m = p.get({name!r}); print([digest(m.generate(s, z)) for s in (0, 1) for z in m.SIZES[:3]])")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert repr(here) == there.stdout.strip()
    assert len(set(here)) == len(here), "different seeds or sizes must give different instances"


def test_reference_and_baseline_pass_the_verifier(solved):
    """Both answers are feasible; the reference is no worse; the verifier agrees with the solver."""
    module, instance, reference, meta, baseline = solved
    ref_obj, base_obj = module.evaluate(instance, reference), module.evaluate(instance, baseline)
    assert ref_obj <= base_obj
    assert meta["objective"] == ref_obj
    assert meta["bound"] <= ref_obj
    assert {"solver", "version", "status", "time_limit_s", "workers"} <= set(meta)


def test_baseline_is_deterministic(solved):
    """The naive baseline is the same answer every time."""
    module, instance, _, _, baseline = solved
    assert module.baseline(json.loads(json.dumps(instance))) == baseline


@pytest.mark.parametrize("garbage", [None, [], "x", 3, {}, {"unexpected": 1}, [[0]], {"a": float("nan")}])
def test_corrupted_answers_score_minus_one(solved, garbage):
    """Answers of the wrong shape score -1.0 with a message, never an exception."""
    module, instance, _, _, baseline = solved
    naive = module.evaluate(instance, baseline)
    result = judge(evaluator(module.NAME), instance, garbage, naive, naive - 1)
    assert result["reward"] == FAIL and result["feasible"] == 0 and result["error"]


def test_standard_formats_round_trip_generated_instances(solved):
    """read(write(x)) gives back the instance's data in every standard format."""
    module, instance, *_ = solved
    for fmt in module.FORMATS:
        text = module.write(instance, fmt)
        again = module.read(text, fmt)
        assert module.write(again, fmt) == text
        assert module.evaluate(again, solved[4]) == module.evaluate(instance, solved[4])


@pytest.mark.parametrize("name", NAMES)
def test_verifier_module_imports_only_the_standard_library(name):
    """verify.py is copied into task containers: stdlib and orharbor.verifiers only."""
    source = Path(problem_modules.get(name).__file__).parent / "verify.py"
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            roots = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots = [node.module]
        else:
            continue
        for module in roots:
            assert module.split(".")[0] in allowed or module.startswith("orharbor.verifiers"), module


@pytest.mark.parametrize("name", NAMES)
def test_importing_a_problem_module_does_not_load_ortools(name):
    """OR-Tools is imported inside reference() only: exporting and verifying never need it."""
    code = f"import sys; import orharbor.problem_modules.{name}; print('ortools' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_verifier_bundle_imports_only_the_standard_library():
    """Every file of orharbor/verifiers is stdlib-only too (they all ship in tests/)."""
    folder = Path(problem_modules.__file__).parent.parent / "verifiers"
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    for source in folder.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module.split(".")[0] in allowed or node.module.startswith("orharbor.verifiers"), source
            elif isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] in allowed for a in node.names), source


def test_unknown_problem_suggests_the_closest_name():
    """A typo gets a did-you-mean."""
    with pytest.raises(problem_modules.UnknownProblem, match="did you mean 'jobshop'"):
        problem_modules.get("jobshp")
