"""Provider compatibility, computed from Harbor's own code (orharbor.providers).

No test needs credentials, a provider SDK, a container engine or the network.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner

from harbor.environments.base import BaseEnvironment
from harbor.environments.docker.docker import DockerEnvironment
from harbor.environments.factory import _ENVIRONMENT_REGISTRY, EnvironmentFactory
from harbor.environments.openshift import OpenshiftEnvironment
from harbor.environments.runloop import RunloopEnvironment
from harbor.models.environment_type import EnvironmentType
from harbor.models.task.config import NetworkMode, NetworkPolicy, TaskConfig
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_verifier_environment_definition
from harbor.models.trial.config import EnvironmentConfig as TrialEnvironmentConfig
from harbor.models.trial.paths import TrialPaths

from orharbor import providers as prov
from orharbor.providers.cli import DEFAULT_ALLOWED_HOSTS as CLI_DEFAULT_HOSTS
from orharbor.providers.cli import providers_cmd
from orharbor.providers.probe import TrialStandIn
from orharbor.providers.registry import conditions
from orharbor.providers.stubs import StubModule

HOSTS = prov.DEFAULT_ALLOWED_HOSTS
NO_NETWORK = NetworkPolicy(network_mode=NetworkMode.NO_NETWORK)
PUBLIC = NetworkPolicy(network_mode=NetworkMode.PUBLIC)
ALLOWLIST = NetworkPolicy(network_mode=NetworkMode.ALLOWLIST, allowed_hosts=list(HOSTS))


def config(verifier_mode: str = "separate", agent_network: str = "public") -> TaskConfig:
    return prov.build_task_config(verifier_mode, agent_network, HOSTS if agent_network == "allowlist" else ())


@pytest.fixture(scope="module")
def table() -> list[dict]:
    return prov.compatibility_table()


@pytest.fixture(scope="module")
def separate_task(tmp_path_factory) -> Path:
    """A real task exported by orharbor with the default options (separate verifier, public network)."""
    return prov.export_task(tmp_path_factory.mktemp("separate"))


def test_provider_names_are_harbor_registry():
    names = prov.provider_names()
    assert names == sorted(t.value for t in _ENVIRONMENT_REGISTRY)
    assert {"docker", "podman", "daytona", "modal", "e2b", "runloop", "gke", "singularity"} <= set(names)


def test_export_config_is_the_exporters_task_toml():
    cfg = config("separate", "allowlist")
    assert cfg.verifier.environment is not None
    assert cfg.verifier.environment.network_mode == NetworkMode.NO_NETWORK
    assert cfg.environment.network_mode == NetworkMode.PUBLIC
    assert cfg.agent.explicit_phase_policy() == ALLOWLIST
    assert prov.export_choice_of(cfg) == prov.ExportChoice("separate", "allowlist", HOSTS)


@pytest.mark.parametrize("provider", ["daytona", "modal"])
def test_switching_offline_capable_provider_accepts_every_export(provider):
    for verifier_mode, agent_network in prov.VARIANTS:
        assert prov.check_export(provider, config(verifier_mode, agent_network)) == []
    (evaluation,) = prov.evaluate(provider, config("separate", "allowlist"))
    caps = evaluation.capabilities["agent environment"]
    assert caps.disable_internet and caps.network_allowlist and caps.dynamic_network_policy


def test_provider_that_cannot_disable_networking_refuses_separate_and_names_shared(separate_task):
    reasons = prov.check_export("openshift", separate_task)
    assert reasons, "openshift has disable_internet=False, so an offline verifier container must be refused"
    assert any("no-network" in r and "--verifier-mode shared" in r for r in reasons)
    assert prov.check_export("openshift", config("shared", "public")) == []


def test_runloop_static_network_refusals():
    # Runloop can start offline (disable_internet) but cannot switch after start.
    assert prov.check_export("runloop", config("separate", "public")) == []
    reasons = prov.check_export("runloop", config("separate", "allowlist"))
    assert reasons and all("cannot change network policy after start" in r for r in reasons)
    assert all(r.endswith("export with --agent-network public") for r in reasons)


def test_separate_verifier_without_its_own_environment_is_a_switch():
    """[verifier] network_mode with no [verifier.environment]: the verifier starts from [environment]."""
    data = config("separate", "public").model_dump(mode="json", exclude_none=True)
    data["verifier"].pop("environment")
    data["verifier"]["network_mode"] = "no-network"
    reasons = prov.check_export("runloop", data)
    assert len(reasons) == 1
    assert "starts with public networking" in reasons[0] and "switch to no-network" in reasons[0]
    assert "after the agent has run" in reasons[0]
    assert reasons[0].endswith("export with --verifier-mode shared")
    assert prov.check_export("daytona", data) == []


def test_docker_without_egress_sidecar(separate_task):
    reasons = prov.check_export("docker", separate_task, egress_sidecar=False)
    assert reasons and "no-network" in reasons[0] and "cannot disable networking" in reasons[0]
    assert "--verifier-mode shared" in reasons[0]
    assert prov.check_export("docker", config("shared", "public"), egress_sidecar=False) == []
    assert prov.check_export("docker", separate_task, egress_sidecar=True) == []
    both = prov.check_export("docker", separate_task)
    assert both and all(r.startswith("docker (no sidecar): ") for r in both)


def test_cross_check_docker_real_constructor(separate_task):
    """Harbor's own DockerEnvironment, fully constructed, agrees with the verdicts above."""
    task = Task(separate_task)
    definition = resolve_verifier_environment_definition(task.config, task.paths)

    def build(sidecar: bool):
        with (
            mock.patch.object(DockerEnvironment, "_egress_control_kernel_support", classmethod(lambda c: sidecar)),
            mock.patch.object(subprocess, "Popen", side_effect=AssertionError("no processes")),
        ):
            return DockerEnvironment(
                environment_dir=definition.directory,
                environment_name=task.short_name,
                session_id="t__verifier",
                trial_paths=TrialPaths(trial_dir=separate_task / "trial"),
                task_env_config=definition.config,
                network_policy=NO_NETWORK,
                phase_network_policies=[NO_NETWORK],
                enable_environment_dir_upload=False,
            )

    with pytest.raises(ValueError, match="network_mode='no-network' is not supported"):
        build(False)
    assert build(True).capabilities.disable_internet


#: Providers whose full Harbor constructor runs here without their SDK, credentials or a container engine.
CONSTRUCTIBLE = [
    "docker",
    "podman",
    "kata",
    "openshift",
    "apple-container",
    "singularity",
    "sbx",
    "cua-cloud",
    "hf-sandbox",
    "opensandbox",
]


@pytest.fixture(scope="module")
def variant_tasks(tmp_path_factory) -> dict[str, Task]:
    out = {}
    for verifier_mode, agent_network in prov.VARIANTS:
        folder = tmp_path_factory.mktemp(f"{verifier_mode}-{agent_network}")
        out[f"{verifier_mode}+{agent_network}"] = Task(
            prov.export_task(folder, verifier_mode, agent_network, HOSTS if agent_network == "allowlist" else ())
        )
    return out


def harbor_accepts(provider: str, task: Task, sidecar: bool | None, tmp: Path) -> bool:
    """Whether Harbor's real environment class, fully constructed, plus Trial's checks accept the task."""
    cls = EnvironmentFactory.get_environment_class(EnvironmentType(provider))
    trial = TrialStandIn(
        task, TrialEnvironmentConfig(type=EnvironmentType(provider)), TrialPaths(trial_dir=tmp / "trial")
    )
    plan = trial._network_plan(None, dynamic_network_policy=True)
    shared = plan.verifier_env_baseline is None
    common = dict(environment_name=task.short_name, trial_paths=TrialPaths(trial_dir=tmp / "trial"))
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(subprocess, "Popen", side_effect=AssertionError("no processes")))
        if sidecar is not None:
            stack.enter_context(
                mock.patch.object(cls, "_egress_control_kernel_support", classmethod(lambda c: sidecar))
            )
        try:
            trial.agent_environment = cls(
                environment_dir=task.paths.environment_dir,
                session_id="t__env",
                task_env_config=task.config.environment.model_copy(deep=True),
                network_policy=plan.agent_env_baseline,
                phase_network_policies=[plan.agent_phase, plan.verifier_phase] if shared else [plan.agent_phase],
                **common,
            )
            trial._validate_network_policy_modes()
            if not shared:
                definition = resolve_verifier_environment_definition(task.config, task.paths)
                vplan = trial._network_plan(None, env_config=definition.config, dynamic_network_policy=True)
                verifier = cls(
                    environment_dir=definition.directory,
                    session_id="t__verifier",
                    task_env_config=definition.config,
                    enable_environment_dir_upload=False,
                    network_policy=vplan.verifier_env_baseline,
                    phase_network_policies=[vplan.verifier_phase],
                    **common,
                )
                trial._validate_separate_verifier_env_policies(verifier, plan=vplan)
        except (ValueError, RuntimeError, FileNotFoundError):
            return False
    return True


@pytest.mark.parametrize("provider", CONSTRUCTIBLE)
def test_cross_check_full_constructors(provider, variant_tasks, tmp_path):
    """orharbor's verdicts equal what Harbor's complete constructors and Trial checks decide."""
    seen = set()
    for condition in conditions(provider, None):
        for label, task in variant_tasks.items():
            (evaluation,) = prov.evaluate(provider, task, egress_sidecar=condition)
            verdict = harbor_accepts(provider, task, condition, tmp_path)
            assert evaluation.accepted == verdict, (label, condition, [r.message for r in evaluation.refusals])
            seen.add(verdict)
    if provider in ("docker", "podman", "openshift"):
        assert seen == {True, False}  # the comparison is not vacuous


def test_cross_check_static_inference_and_policy_support(tmp_path):
    """Stand-in instances through Harbor's unbound checks raise for what orharbor marks as refused."""
    openshift = OpenshiftEnvironment.__new__(OpenshiftEnvironment)
    with pytest.raises(ValueError, match="network_mode='no-network' is not supported"):
        BaseEnvironment.validate_network_policy_support(openshift, NO_NETWORK)
    assert prov.evaluate("openshift", config("separate", "public"))[0].codes() == ["no-network"]

    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    runloop = RunloopEnvironment.__new__(RunloopEnvironment)
    with pytest.raises(ValueError, match="The execution phase network policy differs"):
        BaseEnvironment.__init__(
            runloop,
            environment_dir=tmp_path,
            environment_name="t",
            session_id="t__env",
            trial_paths=TrialPaths(trial_dir=tmp_path / "trial"),
            task_env_config=config("separate", "allowlist").environment,
            network_policy=PUBLIC,
            phase_network_policies=[ALLOWLIST],
        )
    assert "switch" in prov.evaluate("runloop", config("separate", "allowlist"))[0].codes()


def test_table_rows_and_cells(table):
    providers = {row["harbor_name"] for row in table}
    assert providers == set(prov.provider_names())
    labels = [row["provider"] for row in table]
    assert "docker (egress sidecar available)" in labels and "docker (no sidecar)" in labels
    assert "kata" in labels  # Kata never uses the sidecar: both probe outcomes agree, one row
    cell = re.compile(r"^(yes|no: [a-z-]+(, [a-z-]+)*)$")
    columns = [f"{v}+{a}" for v, a in prov.VARIANTS]
    for row in table:
        assert all(cell.match(row[c]) for c in columns), row
        assert "unevaluated" not in " ".join(row[c] for c in columns), row
    by_label = {row["provider"]: row for row in table}
    assert by_label["docker (no sidecar)"]["separate+public"] == "no: no-network"
    assert by_label["docker (no sidecar)"]["shared+public"] == "yes"
    assert all(by_label["daytona"][c] == "yes" for c in columns)
    assert "definition" in by_label["singularity"]["shared+public"]  # needs a prebuilt docker_image


def test_formats(table):
    markdown = prov.format_markdown(table)
    lines = markdown.splitlines()
    assert lines[0] == "| provider | separate+public | shared+public | separate+allowlist | shared+allowlist |"
    assert sum(line.startswith("| ") for line in lines) == len(table) + 1
    assert "`no-network`:" in markdown and "Harbor 0.26" in markdown
    plain = prov.format_plain(table).splitlines()
    assert plain[0].split() == [
        "provider",
        "separate+public",
        "shared+public",
        "separate+allowlist",
        "shared+allowlist",
    ]
    assert len(plain) == len(table) + 2


def test_stubs_do_not_leak(table):
    for name in ("kubernetes", "islo", "modal", "daytona", "dockerfile_parse"):
        assert name not in sys.modules or not isinstance(sys.modules[name], StubModule)
    import harbor.environments.modal as modal_module

    assert modal_module._HAS_MODAL is (sys.modules.get("modal") is not None)


def test_unknown_provider_names_close_match():
    with pytest.raises(prov.UnknownProvider, match="Did you mean 'docker'"):
        prov.check_export("dokcer", config())
    result = CliRunner().invoke(providers_cmd, ["--provider", "daytonna"])
    assert result.exit_code == 2
    assert "Did you mean 'daytona'" in result.output


@pytest.mark.slow
def test_cli_table_and_provider_report():
    assert CLI_DEFAULT_HOSTS == prov.DEFAULT_ALLOWED_HOSTS
    result = CliRunner().invoke(providers_cmd, ["--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("| provider | separate+public")
    result = CliRunner().invoke(providers_cmd, ["--provider", "runloop"])
    assert result.exit_code == 0, result.output
    assert "separate+allowlist" in result.output and "export with --agent-network public" in result.output
    result = CliRunner().invoke(providers_cmd, ["--provider", "aca-sandbox", "--ek", "acr_registry=example"])
    assert result.exit_code == 0, result.output
    assert "separate+public" in result.output and "definition" not in result.output
