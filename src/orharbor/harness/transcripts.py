r"""Transcripts: the assistant turns a scripted model replays, read from YAML or JSON files.

A transcript file is one mapping::

    name: jobshop-l1            # shown in the server's log and errors
    match: 'Job shop scheduling \(\w+\), level 1'   # a regular expression searched in the instruction
    turns:                      # one per model call, in order
      - analysis: ...           # Harbor's terminus-2 JSON turn: analysis, plan,
        plan: ...               # commands [{keystrokes, duration}], task_complete
        commands: [{keystrokes: "ls\n", duration: 0.5}]
      - wait_for: 'status=\d+' # optional: served only once the terminal output matches;
        task_complete: true     # until then the model answers a 1 s wait (see model_server)
      - content: "raw text"     # or the exact reply text, sent as it stands

A turn that sets ``task_complete: true`` is asked by terminus-2 to confirm, so it
must be followed by a second turn with ``task_complete: true`` (the confirmation).
The shipped transcripts (``orharbor/harness/shipped/*.yaml``) solve, or try to
cheat on, the tasks of the shipped small export.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from orharbor.errors import UserError

#: The folder of the shipped transcripts.
SHIPPED_DIR = Path(__file__).with_name("shipped")

#: The keys of a terminus-2 JSON turn (Harbor's terminus_json_plain_parser reads these).
TURN_KEYS = {"analysis", "plan", "commands", "task_complete"}

#: A turn's own key, never sent: the regular expression the terminal output must match before the turn is served.
WAIT_KEY = "wait_for"


@dataclass(frozen=True)
class Transcript:
    """One scripted conversation: its name, the instruction text it answers, and its replies."""

    name: str
    match: re.Pattern
    turns: tuple[dict, ...]

    def answers(self, prompt: str) -> bool:
        """Whether this transcript is the one for a conversation opening with ``prompt``."""
        return self.match.search(prompt) is not None

    def ready(self, index: int, terminal: str) -> bool:
        """Whether turn ``index`` may be served after ``terminal`` (the output terminus-2 last showed).

        A turn with ``wait_for`` follows a command whose end it needs (a program writing the
        deliverable): a fixed duration is a guess that a loaded machine breaks, as it would a
        real agent that declared the task done before its program finished.
        """
        pattern = self.turns[index].get(WAIT_KEY)
        return pattern is None or re.search(pattern, terminal) is not None

    def reply(self, index: int, marker: str) -> str:
        """The text of turn ``index``, with ``marker`` opening its analysis (raw turns: prepended)."""
        turn = self.turns[index]
        if "content" in turn:
            return f"{marker}\n{turn['content']}"
        body = {key: value for key, value in turn.items() if key != WAIT_KEY}
        body["analysis"] = f"{marker} {body.get('analysis', '')}".rstrip()
        return json.dumps(body, indent=2)


def load(path: Path) -> Transcript:
    """Read and check one transcript file (YAML, of which JSON is a subset)."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        reason = " ".join(str(exc).split())  # YAML's message spans lines; an Error is one line
        raise UserError(f"{path}: cannot read the transcript: {reason}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping with name, match and turns")
    name, match, turns = data.get("name", path.stem), data.get("match"), data.get("turns")
    if not isinstance(match, str) or not match:
        raise UserError(f"{path}: 'match' must be a regular expression found in the task instruction")
    try:
        pattern = re.compile(match)
    except re.error as exc:
        raise UserError(f"{path}: 'match' is not a regular expression: {exc}") from None
    if not isinstance(turns, list) or not turns:
        raise UserError(f"{path}: 'turns' must be a non-empty list")
    for i, turn in enumerate(turns):
        _check_turn(path, i, turn)
    return Transcript(name=str(name), match=pattern, turns=tuple(turns))


def _check_turn(path: Path, i: int, turn) -> None:
    where = f"{path}: turn {i}"
    if not isinstance(turn, dict):
        raise UserError(f"{where}: expected a mapping")
    if "content" in turn:
        if set(turn) != {"content"} or not isinstance(turn["content"], str):
            raise UserError(f"{where}: a raw turn has exactly one key, 'content', a string")
        return
    unknown = set(turn) - TURN_KEYS - {WAIT_KEY}
    if unknown:
        raise UserError(
            f"{where}: unknown keys {sorted(unknown)}; a turn has {sorted(TURN_KEYS | {WAIT_KEY})} or 'content'"
        )
    if WAIT_KEY in turn:
        pattern = turn[WAIT_KEY]
        if not isinstance(pattern, str) or not pattern:
            raise UserError(f"{where}: '{WAIT_KEY}' must be a regular expression of the terminal output")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UserError(f"{where}: '{WAIT_KEY}' is not a regular expression: {exc}") from None
    commands = turn.get("commands", [])
    if not isinstance(commands, list):
        raise UserError(f"{where}: 'commands' must be a list")
    for j, command in enumerate(commands):
        if not (
            isinstance(command, dict)
            and isinstance(command.get("keystrokes"), str)
            and set(command) <= {"keystrokes", "duration"}
        ):
            raise UserError(f"{where}: command {j} must be {{keystrokes: str, duration: seconds}}")


def load_all(paths: list[Path]) -> list[Transcript]:
    """Every transcript of ``paths`` (a folder: its ``*.yaml``, ``*.yml`` and ``*.json``, sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
        elif path.is_file():
            found.append(path)
        else:
            raise UserError(f"{path}: no such transcript file or folder")
    if not found:
        raise UserError(f"no transcript in {', '.join(map(str, paths))}")
    return [load(p) for p in found]


def shipped() -> list[Transcript]:
    """The transcripts shipped in the package."""
    return load_all([SHIPPED_DIR])
