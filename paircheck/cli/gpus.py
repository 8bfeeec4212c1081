"""``paircheck gpus``: the GPU table that --gpu names (bandwidth, memory, source per row)."""

from __future__ import annotations

import json

import click

from paircheck.cli.options import render_options


@click.command("gpus")
@click.argument("name", required=False)
@click.option("--detect", "detect", is_flag=True,
              help="Also show what nvidia-smi, rocm-smi or system_profiler reports here.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON (schema_version 1).")
def gpus_cmd(name: str | None, detect: bool, as_json: bool) -> None:
    """The GPUs and Apple chips paircheck predicts speed for; NAME shows the row it matches."""
    from paircheck._format.text_gpus import render_gpus
    from paircheck.hardware.detect import detect as run_detection
    from paircheck.hardware.table import find_gpu, load_gpus

    rows = load_gpus()
    shown = (find_gpu(name, rows, "NAME"),) if name else rows
    detected = run_detection() if detect else None
    if as_json:
        doc = {"schema_version": 1, "gpus": [{**g.to_dict(), "aliases": list(g.aliases), "quote": g.quote,
                                               "note": g.note} for g in shown]}
        if detected is not None:
            doc["detected"] = {"command": detected.command, "problems": list(detected.problems),
                               "devices": [{"name": d.name, "total_bytes": d.total_bytes, "free_bytes": d.free_bytes}
                                           for d in detected.devices]}
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(render_gpus(shown, detected, render_options().width, full=bool(name)))
