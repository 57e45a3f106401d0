"""``orharbor model-server``: serve transcripts to Harbor's terminus-2 as an OpenAI-compatible model."""

from __future__ import annotations

import logging
from pathlib import Path

import click


@click.command("model-server")
@click.option(
    "--transcript",
    "transcripts",
    type=click.Path(path_type=Path),
    multiple=True,
    help="A transcript file, or a folder of them (repeatable). Default: the shipped transcripts.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port to listen on; 0 takes a free one."
)
def model_server_cmd(transcripts: tuple[Path, ...], host: str, port: int) -> None:
    """Replay transcripts as an OpenAI-compatible model, at no model cost, until Ctrl-C.

    Run Harbor's terminus-2 against it with the printed --ak api_base and
    `-m openai/scripted` (set OPENAI_API_KEY to anything). Each conversation gets the
    first transcript whose `match` is found in its task instruction; one that runs
    past its transcript's end gets an HTTP error, and the server logs it.
    """
    from orharbor.harness import transcripts as loader
    from orharbor.harness.model_server import ModelServer

    loaded = loader.load_all(list(transcripts)) if transcripts else loader.shipped()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    with ModelServer(loaded, host, port) as server:
        click.echo(
            f"scripted model on {server.api_base} with {len(loaded)} transcript(s): "
            + ", ".join(t.name for t in loaded)
        )
        click.echo(
            f"  harbor run -p TASK -a terminus-2 -m openai/scripted --ak api_base={server.api_base} "
            "-e orharbor.harbor_env:BubblewrapEnvironment",
            err=False,
        )
        server.serve_forever()
