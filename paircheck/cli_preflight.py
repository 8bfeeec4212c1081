"""Pre-flight commands for launch scripts (run, lint-cmd, lint-modelfile)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
