"""A scripted OpenAI-compatible model server: replays transcripts to Harbor's terminus-2 at no model cost.

terminus-2 runs its model loop on the host and only types into tmux inside the
environment, so a server on 127.0.0.1 is reachable from every trial. Point it at
the server with ``-m openai/scripted --ak api_base=http://127.0.0.1:PORT/v1``
(and any ``OPENAI_API_KEY``: LiteLLM's OpenAI client insists on one).

The server keeps no per-conversation state, so any number of trials may share it:

- the transcript is the first whose ``match`` (a regular expression) is found in the
  conversation's first message (terminus-2's prompt, which holds the task instruction);
- every reply opens with a marker ``[scripted turn N]``, which the conversation
  carries back in its history, so the next turn is one past the highest marker
  seen in the messages after the first. Harbor's retries and parse-error rounds
  therefore never skip or repeat a turn (a command that prints such a marker
  into the terminal would move it: transcripts should not);
- a turn with ``wait_for`` is served only once the last message (the terminal
  output terminus-2 shows) matches it; until then the reply is a wait (one empty
  command of WAIT_S seconds, terminus-2's pure delay) carrying the previous turn's
  marker, so the turn does not advance;
- terminus-2's context summarisation (three calls when the context fills, or a
  short fallback call) is answered with a fixed text that carries the marker on,
  so the transcript resumes where it was after the hand-off.

A conversation that asks for a turn past the transcript's end, or matches no
transcript, gets HTTP 400 with the reason, and the server logs it: the trial
fails loudly instead of idling.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from orharbor.harness.transcripts import Transcript

log = logging.getLogger("orharbor.model_server")

#: The model name the server reports; any name a client sends is accepted.
MODEL = "scripted"

MARKER = re.compile(r"\[scripted turn (\d+)\]")

#: How long a wait reply asks terminus-2 to let the terminal run before showing it again.
WAIT_S = 1.0

#: How terminus-2's summarisation prompts begin (harbor/agents/terminus_2/terminus_2.py, _summarize and
#: the short fallback of _query_llm): these calls get a fixed text and consume no turn.
SUMMARY_PROMPTS = (
    "You are about to hand off your work to another AI agent",
    "You are picking up work from a previous AI agent",
    "The next agent has a few questions for you",
    "Briefly continue this task:",
)


class ScriptError(Exception):
    """A request the transcripts cannot answer (no transcript matches, or it has no turn left)."""


@dataclass
class Script:
    """The transcripts a server replays, and what it has served (for logs and tests)."""

    transcripts: list[Transcript]
    served: list[tuple[str, int]] = field(default_factory=list)
    waits: list[tuple[str, int]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, messages: list[dict]) -> str:
        """The reply to a chat request's ``messages``; ScriptError when there is none."""
        if not messages:
            raise ScriptError("the request has no messages")
        texts = [_text(m.get("content")) for m in messages]
        done = max((int(n) for text in texts[1:] for n in MARKER.findall(text)), default=-1)
        if texts[-1].lstrip().startswith(SUMMARY_PROMPTS):
            # the question subagent starts a fresh history whose only message carries the marker
            done = max([done, *(int(n) for n in MARKER.findall(texts[-1]))])
            return (
                f"[scripted turn {done}] Scripted model: the transcript continues after turn {done}; "
                "there is nothing else to summarise."
            )
        first = texts[0]
        transcript = next((t for t in self.transcripts if t.answers(first)), None)
        if transcript is None:
            raise ScriptError(
                "no transcript matches this task; matches tried: "
                + ", ".join(repr(t.match.pattern) for t in self.transcripts)
            )
        turn = done + 1
        if turn >= len(transcript.turns):
            raise ScriptError(
                f"transcript {transcript.name!r} has {len(transcript.turns)} turns and was asked "
                f"for turn {turn}: the agent did not stop where the transcript expected"
            )
        if not transcript.ready(turn, texts[-1]):
            with self.lock:
                self.waits.append((transcript.name, turn))
            log.info("transcript %s: turn %d waits for the terminal", transcript.name, turn)
            return wait_reply(done)
        with self.lock:
            self.served.append((transcript.name, turn))
        log.info("transcript %s: turn %d of %d", transcript.name, turn, len(transcript.turns))
        return transcript.reply(turn, f"[scripted turn {turn}]")

    def fail(self, reason: str) -> None:
        with self.lock:
            self.failures.append(reason)
        log.error("scripted model: %s", reason)


def wait_reply(done: int) -> str:
    """A terminus-2 turn that types nothing and lets the terminal run WAIT_S seconds; it carries the marker
    of turn ``done`` again (none before the first turn), so the conversation still asks for turn done + 1."""
    marker = f"[scripted turn {done}] " if done >= 0 else ""
    return json.dumps(
        {
            "analysis": f"{marker}Waiting for the command to finish.",
            "plan": "Wait.",
            "commands": [{"keystrokes": "", "duration": WAIT_S}],
            "task_complete": False,
        },
        indent=2,
    )


def _text(content) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def completion(text: str, model: str, messages: list | None = None) -> dict:
    """An OpenAI chat.completion object holding ``text``, with rough token counts (four characters a token) of
    the reply and of the ``messages`` it answers, so a job's trials carry token counts as a real model's do."""
    completion_tokens = max(1, len(text) // 4)
    prompt_tokens = sum(len(_text(m.get("content"))) for m in messages or () if isinstance(m, dict)) // 4
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class Handler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions (also without /v1), GET /v1/models; everything else 404."""

    server: "ModelServer"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "orharbor"}]})
        else:
            self._error(404, f"no route GET {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route POST {self.path}: the scripted model answers /v1/chat/completions")
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            self._error(400, f"the request body is not JSON: {exc}")
            return
        if body.get("stream"):
            self.server.script.fail("a streaming request: the scripted model answers only stream=false")
            self._error(400, "the scripted model does not stream")
            return
        try:
            text = self.server.script.answer(body.get("messages") or [])
        except ScriptError as exc:
            self.server.script.fail(str(exc))
            self._error(400, f"scripted model: {exc}")
            return
        self._send(200, completion(text, str(body.get("model") or MODEL), body.get("messages") or []))

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": None}})

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's signature
        log.debug("%s %s", self.address_string(), format % args)


class ModelServer(ThreadingHTTPServer):
    """The HTTP server of one :class:`Script`; ``port=0`` takes a free port (see :attr:`api_base`)."""

    daemon_threads = True

    def __init__(self, transcripts: list[Transcript], host: str = "127.0.0.1", port: int = 0):
        super().__init__((host, port), Handler)
        self.script = Script(list(transcripts))
        self._thread: threading.Thread | None = None

    @property
    def api_base(self) -> str:
        host, port = self.server_address[:2]
        assert isinstance(host, str)  # the (host, port) this TCP server bound
        return f"http://{host}:{port}/v1"

    def start(self) -> "ModelServer":
        """Serve in a daemon thread; returns self (``with`` stops it and closes the socket)."""
        self._thread = threading.Thread(target=self.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
        super().__exit__(*exc)
