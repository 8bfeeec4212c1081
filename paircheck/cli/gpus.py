"""``paircheck gpus``: the GPU table that --gpu names (bandwidth, memory, source per row)."""

from __future__ import annotations

import click

from paircheck._format import render
from paircheck.cli.options import render_options


@click.command("gpus")
@click.argument("name", required=False)
@click.option("--detect", "detect", is_flag=True,
              help="Also show what nvidia-smi, rocm-smi or system_profiler reports here.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON (schema_version 1).")
def gpus_cmd(name: str | None, detect: bool, as_json: bool) -> None:
    """The GPUs and Apple chips paircheck predicts speed for; NAME shows the row it matches."""
    from paircheck.api import gpus

    click.echo(render("json" if as_json else "text", gpus(name, detect=detect), render_options()))
