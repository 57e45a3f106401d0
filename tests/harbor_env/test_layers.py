"""The build cache: an image's pure steps run once per image, as ``docker build`` caches them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
from harbor.models.trial.paths import TrialPaths

from sandboxes import run

from orharbor.exporter import ExportOptions, export_dataset
from orharbor.datasets.rows import read_rows, shipped_datasets
from orharbor.harbor_env import BubblewrapEnvironment, layers
from orharbor.harbor_env.image import Run, read_dockerfile
from orharbor.image_facts.interpreter_record import RECORD_DIR, keys_command, rekey_command


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> list[Path]:
    rows = [r for p in shipped_datasets() for r in read_rows(p) if r["problem"] == "jobshop"][:2]
    out = tmp_path_factory.mktemp("tasks")
    export_dataset(rows, out, ExportOptions())
    return sorted(p for p in out.iterdir() if (p / "task.toml").is_file())


@pytest.fixture(scope="module")
def task(tasks) -> Path:
    return tasks[0]


class Counting(BubblewrapEnvironment):
    """Counts the RUN steps it carries out."""

    ran: list[str]

    async def _checked(self, command: str, cwd: str = "/") -> None:
        type(self).ran.append(command)
        await super()._checked(command, cwd)

    async def _run_steps(self, steps: list[tuple[str, str]]) -> None:
        type(self).ran.extend(command for command, _ in steps)
        await super()._run_steps(steps)


#: Lines of the record's keys that differ from its files as they are (what test.sh would hash again at a verify).
STALE_KEYS = (
    f"cd /usr/local && {keys_command().rsplit(' > ', 1)[0]} "
    f"| LC_ALL=C comm -3 {RECORD_DIR.removeprefix('/usr/local/')}/interpreter.keys -"
)


def _start_twice(
    tmp_path: Path, image: Path, cls: type[Counting], cache: Path | None = None, forget: bool = False
) -> tuple[list[list[str]], list[str], list[str]]:
    """Start two sandboxes of ``image`` one after the other: the RUN steps each carried out, each one's record,
    and each one's stale keys. Layers are kept on disk in ``cache`` (default: a new folder); ``forget``: the
    second sandbox starts as in a new process, with only what the disk kept."""

    async def body():
        runs, records, stale = [], [], []
        for name in ("first", "second"):
            if forget:
                layers.clear()
            cls.ran = []
            paths = TrialPaths(tmp_path / name)
            paths.mkdir()
            env = cls(
                environment_dir=image,
                environment_name=name,
                session_id=f"{name}__1",
                trial_paths=paths,
                task_env_config=EnvironmentConfig(),
                network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
            )
            try:
                await env.start(force_build=False)
                record = await env.exec(
                    f"cd {layers.RECORD_DIR} && find . -printf '%u %m %y %p\\n' | sort "
                    "&& find . -type f -exec sha256sum {} + | sort",
                    user="root",
                )
                keys = await env.exec(STALE_KEYS, user="root")
            finally:
                await env.stop(delete=True)
            runs.append(list(cls.ran))
            records.append(record.stdout)
            stale.append(keys.stdout if keys.return_code == 0 else f"exit {keys.return_code}: {keys.stderr}")
        return runs, records, stale

    layers.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(layers.CACHE_ENV, str(cache or tmp_path / "layer-cache"))
        return run(body())


def test_every_exported_dockerfile_checks_its_base_then_records_its_interpreter(task):
    """The templates' base image check and interpreter record are what the cache recognises (a template edit that
    breaks the match fails here, not silently in every trial's time)."""
    for image in ("environment", "tests"):
        steps = [s for s in read_dockerfile(task / image / "Dockerfile").steps if isinstance(s, Run)]
        assert layers.outputs(steps[0]) == ()
        assert layers.outputs(steps[1]) == (layers.RECORD_DIR,)
        assert all(layers.outputs(s) is None for s in steps[2:])


@pytest.mark.sandbox
def test_a_second_sandbox_of_an_image_takes_the_check_and_the_record_from_the_cache(tmp_path, task):
    runs, records, stale = _start_twice(tmp_path, task / "environment", Counting)
    first, second = runs
    assert any(c.startswith(layers.RECORD_START) for c in first)
    assert not any(c.startswith(layers.RECORD_START) or " ".join(c.split()) == layers.CHECK_COMMAND for c in second)
    assert len(second) == len(first) - 1 and rekey_command() in second  # the record's keys derived again
    # the same record, its keys those of the files each sandbox holds: a verify hashes none of them again
    assert _but_keys(records[0]) == _but_keys(records[1])
    assert stale == ["", ""]
    modes = [line.rsplit(" ", 1)[0] for line in records[0].splitlines() if not re.match("[0-9a-f]{64} ", line)]
    assert set(modes) == {"root 755 d", "root 644 f"}, modes
    assert re.search(r"^[0-9a-f]{64}  ./pycache/.*/json/decoder.cpython-3\d+.pyc$", records[0], flags=re.MULTILINE)


class NoCache(Counting):
    """The defence of the run time removed: every step at every start."""

    build_cache = False


@pytest.mark.sandbox
def test_without_the_cache_every_sandbox_runs_the_record_again(tmp_path, task):
    runs, records, stale = _start_twice(tmp_path, task / "environment", NoCache)
    assert runs[0] == runs[1] and any(c.startswith(layers.RECORD_START) for c in runs[1])
    # the same record, but for the keys of the bytecode each build compiled anew (its inodes and times)
    assert _but_keys(records[0]) == _but_keys(records[1]) and stale == ["", ""]


class NoRefresh(Counting):
    """The replayed record's keys left as the first build wrote them (the copies' inodes and times differ)."""

    async def _run_steps(self, steps: list[tuple[str, str]]) -> None:
        await super()._run_steps([s for s in steps if s[0] != rekey_command()])


@pytest.mark.sandbox
def test_without_refreshing_the_keys_every_verify_hashes_the_replayed_bytecode_again(tmp_path, task):
    runs, records, stale = _start_twice(tmp_path, task / "environment", NoRefresh)
    assert stale[0] == "" and stale[1], stale
    assert all("share/orharbor/pycache/" in line for line in stale[1].splitlines())


@pytest.mark.sandbox
def test_the_next_process_takes_the_check_and_the_record_from_the_disk(tmp_path, task):
    """As Docker's layer store outlives a build: a new process replays the record another one kept, its keys
    derived again, and a verify then hashes nothing again."""
    cache = tmp_path / "cache"
    runs, records, stale = _start_twice(tmp_path, task / "environment", Counting, cache=cache, forget=True)
    first, second = runs
    assert any(c.startswith(layers.RECORD_START) for c in first)
    assert not any(c.startswith(layers.RECORD_START) or " ".join(c.split()) == layers.CHECK_COMMAND for c in second)
    assert rekey_command() in second and _but_keys(records[0]) == _but_keys(records[1]) and stale == ["", ""]
    assert (cache.stat().st_mode & 0o777) == 0o700
    assert len([entry for entry in cache.iterdir() if (entry / "layer.json").is_file()]) == 2  # the check, the record


@pytest.mark.sandbox
def test_a_kept_layer_that_others_could_have_written_is_never_read(tmp_path, task, monkeypatch):
    """A layer is read only from a folder no one but its owner can write: another user's file planted in a kept
    record, in a cache anyone may write, is not replayed (the record is built again); with that check removed
    (mutation), the planted file is in the sandbox's record."""
    cache = tmp_path / "cache"
    _start_twice(tmp_path / "honest", task / "environment", Counting, cache=cache, forget=True)
    kept = [entry / "0" for entry in cache.iterdir() if (entry / "0").is_dir()]
    assert len(kept) == 1
    (kept[0] / "planted").write_text("another user's file")
    cache.chmod(0o777)
    runs, records, _ = _start_twice(tmp_path / "open", task / "environment", Counting, cache=cache, forget=True)
    assert all(any(c.startswith(layers.RECORD_START) for c in ran) for ran in runs)
    assert "./planted" not in records[0] + records[1]
    monkeypatch.setattr(layers, "disk_root", lambda: cache)
    runs, records, _ = _start_twice(tmp_path / "mutated", task / "environment", Counting, cache=cache, forget=True)
    assert not any(c.startswith(layers.RECORD_START) for c in runs[0]) and "./planted" in records[0]


def test_a_layer_is_kept_whole_or_not_at_all_and_a_damaged_one_is_built_again(tmp_path, monkeypatch):
    """keep() writes an entry in one rename (the first of two concurrent writers stays); an entry cut short
    reads as missing; the cache folder is made root-only, and one in a folder others may write is not used."""
    monkeypatch.setenv(layers.CACHE_ENV, str(tmp_path / "cache"))
    built = tmp_path / "built"
    (built / "pycache").mkdir(parents=True)
    (built / "pycache" / "os.pyc").write_bytes(b"bytecode")
    layers.keep("k1", layers.Layer((("/usr/local/share/orharbor", built),)))
    layers.clear()
    [(target, copy)] = layers.cached("k1").folders
    assert target == "/usr/local/share/orharbor" and (copy / "pycache" / "os.pyc").read_bytes() == b"bytecode"
    assert copy != built and (tmp_path / "cache").stat().st_mode & 0o777 == 0o700
    (built / "pycache" / "os.pyc").write_bytes(b"a second writer")
    layers.keep("k1", layers.Layer((("/usr/local/share/orharbor", built),)))
    layers.clear()
    assert (layers.cached("k1").folders[0][1] / "pycache" / "os.pyc").read_bytes() == b"bytecode"
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["k1"]  # no staging folder left
    (tmp_path / "cache" / "k1" / "layer.json").write_text("[not json")
    layers.clear()
    assert layers.cached("k1") is None
    monkeypatch.setenv(layers.CACHE_ENV, "")
    assert layers.disk_root() is None
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv(layers.CACHE_ENV, str(shared / "cache"))
    assert layers.disk_root() is None
    shared.chmod(0o1777)  # sticky, as /tmp: others cannot rename what is ours
    assert layers.disk_root() == shared / "cache"


def _but_keys(record: str) -> list[str]:
    return [line for line in record.splitlines() if not line.endswith("./interpreter.keys")]


def test_the_key_follows_what_a_copy_brings_and_each_step_before(tmp_path):
    (tmp_path / "data.txt").write_text("one")
    (tmp_path / "Dockerfile").write_text(
        f"FROM python:3.12-slim\nCOPY data.txt /app/data.txt\nRUN touch /x\nRUN {layers.RECORD_START} true\n"
    )
    plan = read_dockerfile(tmp_path / "Dockerfile")
    first = layers.key(plan, 2, "layout")
    assert first is not None and layers.key(plan, 1, "layout") is None  # a plain RUN is never cached
    assert layers.key(plan, 2, "layout") == first and layers.key(plan, 2, "other layout") != first
    (tmp_path / "data.txt").write_text("two")
    assert layers.key(plan, 2, "layout") != first
    (tmp_path / "Dockerfile").write_text(
        f"FROM python:3.12-slim\nCOPY data.txt /usr/local/lib/data.txt\nRUN {layers.RECORD_START} true\n"
    )
    assert layers.key(read_dockerfile(tmp_path / "Dockerfile"), 1, "layout") is None  # /usr/local written first


def test_the_check_and_the_record_are_one_layer_for_every_task_of_a_kind(tasks):
    """They come before anything of the task, so two tasks' images share them (as two Docker builds would)."""
    for image in ("environment", "tests"):
        plans = [read_dockerfile(t / image / "Dockerfile") for t in tasks]
        assert plans[0].steps != plans[1].steps  # the tasks differ (their files)
        assert [layers.key(plan, 1, "layout") for plan in plans] == [layers.key(plans[0], 1, "layout")] * 2


@pytest.mark.sandbox
def test_run_steps_taken_together_keep_their_folders_and_the_failing_one_is_named(tmp_path):
    """The build runs consecutive RUN steps as one command: each from its own WORKDIR, in a shell of its own (a
    variable set by one is not seen by the next), and the first failure stops the build with its own command."""
    image = tmp_path / "image"
    image.mkdir()
    (image / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /w\nRUN x=1; pwd > /first\n"
        'WORKDIR /v\nRUN echo "$x$(pwd)" > /second  # a comment\n'
    )
    paths = TrialPaths(tmp_path / "trial")
    paths.mkdir()

    async def body(folder: Path) -> str:
        env = BubblewrapEnvironment(
            environment_dir=folder,
            environment_name="steps",
            session_id="steps__1",
            trial_paths=paths,
            task_env_config=EnvironmentConfig(),
            network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
        )
        try:
            await env.start(force_build=False)
            return (await env.exec("cat /first /second", user="root")).stdout
        finally:
            await env.stop(delete=True)

    assert run(body(image)) == "/w\n/v\n"
    (image / "Dockerfile").write_text(
        "FROM python:3.12-slim\nRUN touch /a\nRUN sh -c 'echo broken >&2; exit 7'\nRUN touch /c\n"
    )
    with pytest.raises(RuntimeError) as failed:
        run(body(image))
    assert str(failed.value) == "image step failed (exit 7): sh -c 'echo broken >&2; exit 7'\nbroken\n"


def _verifier_imports(tmp_path: Path, task: Path, pycache: str) -> str:
    """``python3 -v`` of the task's verify.py in its verifier image, run the way test.sh runs it but for
    ``-X pycache_prefix=pycache``: where each module's code came from (a file, or the zip bundle), one line each."""
    paths = TrialPaths(tmp_path / "verifier")
    paths.mkdir()

    async def body() -> str:
        env = BubblewrapEnvironment(
            environment_dir=task / "tests",
            environment_name="verifier",
            session_id="verifier__1",
            trial_paths=paths,
            task_env_config=EnvironmentConfig(),
            network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
        )
        try:
            await env.start(force_build=False)
            result = await env.exec(
                f"/usr/local/bin/python3 -I -S -B -X pycache_prefix={pycache} -v "
                "/tests/verify.py --in-container 2>&1 | grep -E 'code object from|zipimporter object'",
                user="root",
            )
            return result.stdout
        finally:
            await env.stop(delete=True)

    return run(body())


@pytest.mark.sandbox
def test_the_verifier_compiles_no_standard_library_module_in_its_image(tmp_path, task):
    """Run in its image, the verifier reads every standard-library module's bytecode from the record's prefix
    (imports the record did not foresee, such as the codec Python looks up itself, included); nothing is
    compiled from a source file, and the task's own modules come from its bundle in /tests. The mutation, an
    empty prefix, compiles the standard library again."""
    from orharbor.image_facts.interpreter_record import PYCACHE

    loaded = _verifier_imports(tmp_path / "record", task, PYCACHE)
    assert f"# code object from '{PYCACHE}/usr/local/lib/python3" in loaded  # the compiled ones are quoted
    assert re.findall(r"^# code object from ([^'\s]\S*)$", loaded, flags=re.MULTILINE) == []
    bundled = re.findall(r"^import '(orharbor\S*)' # <zipimporter object \"([^\"]+)\">$", loaded, flags=re.MULTILINE)
    assert {"orharbor.verifiers.main", "orharbor.problem_modules.jobshop.verify"} <= {name for name, _ in bundled}
    assert all(where.startswith("/tests/orharbor.zip/") for _, where in bundled), bundled
    empty = _verifier_imports(tmp_path / "empty", task, "/tmp/orharbor-empty-prefix")
    assert any(
        path.startswith("/usr/local/lib/python3")
        for path in re.findall(r"^# code object from (\S+)$", empty, flags=re.MULTILINE)
    )
