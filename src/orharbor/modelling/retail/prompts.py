"""RetailOpt-190 prompts: the instance data in the [DATA] block, the archetype and the family.

A RetailOpt-190 prompt has the sections [SCENARIO] (with ``Family:``,
``Archetype:`` and ``Scenario ID:`` lines), [BUSINESS DESCRIPTION], [DATA]
(the instance as a ```json fenced block), [OUTPUT FORMAT] and [TASK].
Scenario ids are ``<archetype>_v<k>``, archetypes ``retail_f<n>_<name>``.
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", re.DOTALL | re.IGNORECASE)
_ARCHETYPE = re.compile(r"^(retail_f(\d+)_[a-z0-9_]+?)(?:_v\d+)?$")
_ARCHETYPE_LINE = re.compile(r"^\s*Archetype:\s*(\S+)\s*$", re.MULTILINE)
_SCENARIO_LINE = re.compile(r"^\s*Scenario ID:\s*(\S+)\s*$", re.MULTILINE)


def extract_data(prompt: str) -> dict:
    """The instance dict of a prompt: the JSON object in the first fenced block after ``[DATA]``."""
    if not isinstance(prompt, str):
        raise ValueError(f"prompt: expected text, got {type(prompt).__name__}")
    start = prompt.find("[DATA]")
    if start < 0:
        raise ValueError("prompt has no [DATA] section")
    section = prompt[start + len("[DATA]") :]
    end = re.search(r"^\[(OUTPUT FORMAT|TASK)\]", section, re.MULTILINE)
    if end:
        section = section[: end.start()]
    fence = _FENCE.search(section)
    if fence is None:
        raise ValueError("the [DATA] section has no ```json ... ``` block")
    try:
        data = json.loads(fence.group(1))
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the JSON in the [DATA] block does not parse: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"the JSON in the [DATA] block is a {type(data).__name__}, expected an object")
    return data


def archetype(prompt_or_scenario_id: str) -> str:
    """``retail_f6_pack_size_integer`` from ``retail_f6_pack_size_integer_v0``, an archetype name,
    or a prompt (its ``Archetype:`` line, else its ``Scenario ID:`` line)."""
    if not isinstance(prompt_or_scenario_id, str):
        raise ValueError(f"expected a scenario id or a prompt, got {type(prompt_or_scenario_id).__name__}")
    text = prompt_or_scenario_id.strip()
    match = _ARCHETYPE.match(text)
    if match:
        return match.group(1)
    for line in (_ARCHETYPE_LINE, _SCENARIO_LINE):
        found = line.search(text)
        if found and (archetype_match := _ARCHETYPE.match(found.group(1))):
            return archetype_match.group(1)
    raise ValueError(
        f"no RetailOpt archetype (retail_f<n>_<name>[_v<k>]) in {text[:60]!r}: "
        "expected a scenario id, or a prompt with an 'Archetype:' or 'Scenario ID:' line"
    )


def family(prompt_or_scenario_id: str) -> str:
    """The family of a scenario: ``F6`` for ``retail_f6_pack_size_integer_v0`` (or its prompt)."""
    found = _ARCHETYPE.match(archetype(prompt_or_scenario_id))
    assert found is not None  # archetype() returns a name _ARCHETYPE matched
    return "F" + found.group(2)
