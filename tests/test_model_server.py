"""The scripted model server and its transcripts, spoken to the way Harbor's terminus-2 speaks to a model.

Harbor's own parser, LiteLLM wrapper, chat and summarisation code are the clients
here; the real agent in the real sandbox is tests/test_real_harness.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor.cli import main
from orharbor.errors import UserError
from orharbor.harness import transcripts
from orharbor.harness.model_server import WAIT_S, ModelServer

# LiteLLM (which Harbor's LLM clients import) fetches its price list at import unless told not to: offline,
# that is three retries and seconds lost per test process
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TOY = {
    "name": "toy",
    "match": r"Task Description:\s*toy task",
    "turns": [
        {"analysis": "look", "plan": "list", "commands": [{"keystrokes": "ls\n", "duration": 0.1}]},
        {"analysis": "done", "plan": "finish", "commands": [], "task_complete": True},
        {"analysis": "sure", "plan": "confirm", "commands": [], "task_complete": True},
    ],
}


def _toy(tmp_path: Path, **changes) -> transcripts.Transcript:
    path = tmp_path / "toy.yaml"
    path.write_text(json.dumps({**TOY, **changes}))
    return transcripts.load(path)


def _prompt(instruction: str) -> str:
    """terminus-2's first message for ``instruction``, from Harbor's own template."""
    from harbor.agents.terminus_2 import terminus_2

    template = (Path(terminus_2.__file__).parent / "templates" / "terminus-json-plain.txt").read_text()
    return template.format(instruction=instruction, terminal_state="$ ")


def _post(api_base: str, messages: list[dict]) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{api_base}/chat/completions",
        method="POST",
        data=json.dumps({"model": "scripted", "messages": messages}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def _content(reply: dict) -> str:
    return reply["choices"][0]["message"]["content"]


@pytest.mark.slow
def test_every_shipped_turn_parses_cleanly_with_terminus_2s_parser():
    """Harbor's JSON parser reads each shipped turn without error or warning; only the last two complete the task."""
    from harbor.agents.terminus_2.terminus_json_plain_parser import TerminusJSONPlainParser

    shipped = transcripts.shipped()
    assert {t.name for t in shipped} == {
        "jobshop-level1",
        "jobshop-level2",
        "transportation-lp",
        "retailopt-f1-base",
        "reward-hack",
    }
    parser = TerminusJSONPlainParser()
    for transcript in shipped:
        complete = []
        for i in range(len(transcript.turns)):
            result = parser.parse_response(transcript.reply(i, f"[scripted turn {i}]"))
            assert (result.error, result.warning) == ("", ""), (transcript.name, i)
            assert all(c.keystrokes.endswith("\n") for c in result.commands), (transcript.name, i)
            complete.append(result.is_task_complete)
        n = len(complete)
        assert complete == [False] * (n - 2) + [True, True], transcript.name


def test_each_shipped_transcript_answers_the_task_it_was_written_for(exported, exported_specs):
    """The first transcript matching an exported task's instruction is the one written for it, and nothing else matches."""
    shipped = transcripts.shipped()
    mode = exported["separate"]
    expected = {
        "jobshop-4x4-l1-s0": "jobshop-level1",
        "jobshop-10x10-l1-s1": "jobshop-level1",
        "jobshop-4x4-l2-s0": "jobshop-level2",
        "wtardiness-n8-l1-s0": "reward-hack",
        "cvrp-n8-l1-s0": None,
        "wtardiness-n8-l2-s2": None,
    }
    tasks = {
        **{name: mode / name for name in expected},
        "transportation_lp": exported_specs["separate"] / "transportation_lp",
        "production_planning_lp": exported_specs["separate"] / "production_planning_lp",
    }
    expected |= {"transportation_lp": "transportation-lp", "production_planning_lp": None}
    for task, folder in tasks.items():
        prompt = _prompt((folder / "instruction.md").read_text())
        found = next((t.name for t in shipped if t.answers(prompt)), None)
        assert found == expected[task], task


def test_retail_transcript_answers_the_f1_base_scenario_only(exported_retail):
    """The RetailOpt transcript matches retail_f1_base with its data in /app/data.json (the schema prompt) only."""
    [retail] = [t for t in transcripts.shipped() if t.name == "retailopt-f1-base"]
    folders = [folder for folder in exported_retail["separate"].iterdir() if (folder / "instruction.md").is_file()]
    matched = {folder.name for folder in folders if retail.answers(_prompt((folder / "instruction.md").read_text()))}
    assert len(folders) == 4 and matched == {"retailopt-retail-f1-base-v0-schema"}


def test_harbors_litellm_chat_plays_the_transcript_in_order(tmp_path, monkeypatch):
    """Harbor's Chat over LiteLLM (model openai/scripted, api_base) gets turn 0, then 1, then 2."""
    from harbor.llms.chat import Chat
    from harbor.llms.lite_llm import LiteLLM

    with ModelServer([_toy(tmp_path)]).start() as server:
        chat = Chat(LiteLLM(model_name="openai/scripted", api_base=server.api_base, api_key="scripted"))
        replies = [
            asyncio.run(chat.chat(prompt)).content
            for prompt in (_prompt("toy task"), "terminal output", "are you sure?")
        ]
    assert [json.loads(r)["analysis"] for r in replies] == [
        "[scripted turn 0] look",
        "[scripted turn 1] done",
        "[scripted turn 2] sure",
    ]
    assert server.script.served == [("toy", 0), ("toy", 1), ("toy", 2)] and server.script.failures == []


def test_concurrent_conversations_each_get_their_own_turns(tmp_path):
    """Eight conversations at once, two transcripts, same task for several: each sees turns 0, 1, 2 in order."""
    other = _toy(tmp_path, name="other", match="other task")
    seen: dict[int, list[str]] = {}

    def converse(k: int, api_base: str) -> None:
        messages = [{"role": "user", "content": _prompt("toy task" if k % 2 else "other task")}]
        seen[k] = []
        for _ in range(3):
            status, reply = _post(api_base, messages)
            assert status == 200
            messages += [{"role": "assistant", "content": _content(reply)}, {"role": "user", "content": "output"}]
            seen[k].append(json.loads(_content(reply))["analysis"].split("]")[0] + "]")

    with ModelServer([_toy(tmp_path), other]).start() as server:
        threads = [threading.Thread(target=converse, args=(k, server.api_base)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert seen == {k: ["[scripted turn 0]", "[scripted turn 1]", "[scripted turn 2]"] for k in range(8)}
    assert sorted(server.script.served).count(("other", 2)) == 4 == sorted(server.script.served).count(("toy", 2))


def test_a_turn_waiting_for_the_terminal_is_held_until_its_output_appears(tmp_path):
    """A ``wait_for`` turn is answered with terminus-2's pure delay (parsed cleanly by Harbor's parser), which does
    not advance the conversation, until the terminal output matches; then the turn itself, and after it the next."""
    from harbor.agents.terminus_2.terminus_json_plain_parser import TerminusJSONPlainParser

    turns = [dict(turn) for turn in TOY["turns"]]
    turns[1]["wait_for"] = r"status=\d+"
    parser = TerminusJSONPlainParser()
    with ModelServer([_toy(tmp_path, turns=turns)]).start() as server:
        messages = [{"role": "user", "content": _prompt("toy task")}]
        replies = []
        # the typed command's echo, a program still running, its end, terminus-2's confirmation question
        for output in ("$ ls; echo status=$?", "still running", "status=0\n$ ", "are you sure?"):
            status, reply = _post(server.api_base, messages)
            assert status == 200
            replies.append(parser.parse_response(_content(reply)))
            messages += [{"role": "assistant", "content": _content(reply)}, {"role": "user", "content": output}]
        status, last = _post(server.api_base, messages)
    assert all((r.error, r.warning) == ("", "") for r in replies)
    assert [r.analysis for r in replies] == [
        "[scripted turn 0] look",
        "[scripted turn 0] Waiting for the command to finish.",
        "[scripted turn 0] Waiting for the command to finish.",
        "[scripted turn 1] done",
    ]
    assert [[(c.keystrokes, c.duration) for c in r.commands] for r in replies[1:3]] == [[("", WAIT_S)]] * 2
    assert not any(r.is_task_complete for r in replies[:3]) and replies[3].is_task_complete
    assert "wait_for" not in _content(last) and json.loads(_content(last))["analysis"] == "[scripted turn 2] sure"
    assert server.script.served == [("toy", 0), ("toy", 1), ("toy", 2)]
    assert server.script.waits == [("toy", 1), ("toy", 1)] and server.script.failures == []


def test_a_conversation_past_the_transcripts_end_gets_http_400_and_a_log_line(tmp_path, caplog):
    """The turn after the last is refused loudly: HTTP 400 naming the transcript, logged and recorded."""
    with ModelServer([_toy(tmp_path)]).start() as server:
        history = [
            {"role": "user", "content": _prompt("toy task")},
            {"role": "assistant", "content": "[scripted turn 2] ..."},
            {"role": "user", "content": "more"},
        ]
        status, reply = _post(server.api_base, history)
        no_match, other = _post(server.api_base, [{"role": "user", "content": _prompt("unknown task")}])
    assert status == 400 and "'toy' has 3 turns and was asked for turn 3" in reply["error"]["message"]
    assert no_match == 400 and "no transcript matches" in other["error"]["message"]
    assert len(server.script.failures) == 2
    assert "asked for turn 3" in caplog.text


def test_terminus_2_summarisation_hands_off_and_the_transcript_resumes(tmp_path, monkeypatch):
    """Harbor's own _summarize (three model calls) consumes no turn; the chat after the hand-off gets the next turn."""
    from harbor.agents.terminus_2.terminus_2 import Terminus2
    from harbor.llms.chat import Chat

    monkeypatch.setenv("OPENAI_API_KEY", "scripted")

    class Pane:
        async def capture_pane(self, capture_entire: bool = False) -> str:
            return "$ "

    with ModelServer([_toy(tmp_path)]).start() as server:
        agent = Terminus2(logs_dir=tmp_path, model_name="openai/scripted", api_base=server.api_base)
        chat = Chat(agent._llm)
        before = [asyncio.run(chat.chat(prompt)).content for prompt in (_prompt("toy task"), "terminal output")]
        handoff, refs = asyncio.run(agent._summarize(chat, "toy task", Pane()))
        after = asyncio.run(chat.chat(handoff)).content
    assert [json.loads(r)["analysis"][:17] for r in before] == ["[scripted turn 0]", "[scripted turn 1]"]
    assert refs and len(refs) == 3 and len(chat.messages) == 5  # the history was replaced by the hand-off
    assert json.loads(after)["analysis"] == "[scripted turn 2] sure"
    assert server.script.served == [("toy", 0), ("toy", 1), ("toy", 2)] and server.script.failures == []


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "expected a mapping"),
        ('{"turns": [{"analysis": "a"}]}', "'match' must be a regular expression"),
        ('{"match": "(", "turns": [{"analysis": "a"}]}', "'match' is not a regular expression"),
        ('{"match": "x", "turns": []}', "'turns' must be a non-empty list"),
        ('{"match": "x", "turns": [{"analysis": "a", "comands": []}]}', r"turn 0: unknown keys \['comands'\]"),
        ('{"match": "x", "turns": [{"commands": [{"keys": "ls"}]}]}', "turn 0: command 0 must be"),
        ('{"match": "x", "turns": [{"content": "a", "plan": "b"}]}', "a raw turn has exactly one key"),
        ('{"match": "x", "turns": [{"analysis": "a", "wait_for": "("}]}', "turn 0: 'wait_for' is not a regular exp"),
        ('{"match": "x", "turns": [{"analysis": "a", "wait_for": 3}]}', "turn 0: 'wait_for' must be a regular exp"),
        ("match: [", "cannot read the transcript"),
    ],
)
def test_a_broken_transcript_is_refused_with_its_file_and_place(tmp_path, content, message):
    """Each defect of a transcript file is one UserError naming the file and what is wrong."""
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(UserError, match=message) as caught:
        transcripts.load(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)  # one Error line


def test_model_server_command_refuses_a_missing_transcript(tmp_path):
    """`orharbor model-server --transcript` of a path that does not exist is one Error line, exit 1."""
    result = CliRunner().invoke(main, ["model-server", "--transcript", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1 and "no such transcript file or folder" in result.output


def test_model_server_command_serves_the_shipped_transcripts_until_stopped():
    """`orharbor model-server` prints its api_base and harbor command, and answers /v1/models there."""
    orharbor = Path(sys.executable).with_name("orharbor")
    process = subprocess.Popen([orharbor, "model-server"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first, second = process.stdout.readline(), process.stdout.readline()
        api_base = first.split(" on ")[1].split(" ")[0]
        assert "5 transcript(s)" in first and f"--ak api_base={api_base}" in second and "-a terminus-2" in second
        with urllib.request.urlopen(f"{api_base}/models", timeout=30) as response:
            assert json.load(response)["data"][0]["id"] == "scripted"
    finally:
        process.terminate()
        process.wait(timeout=30)
