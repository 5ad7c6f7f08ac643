"""`kinspect schema [COMMAND]`: the JSON Schema of each command's --json output."""

from __future__ import annotations

import click

from kinspect import api
from kinspect.cli.main import CONTEXT, main


@main.command(context_settings=CONTEXT)
@click.argument("command", required=False)
def schema(command):
    """The JSON Schema (2020-12) of COMMAND's --json output; with no COMMAND, one object holding every
    command's. Every output carries `kinspect_json`, the version of these shapes (docs/json.md).

    Example: kinspect schema vec-report
    """
    import json

    click.echo(json.dumps(api.json_schema(command), indent=1))
