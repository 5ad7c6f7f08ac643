"""Outputs the docs show are what runs (issue 43): docs/commands.md's program table is vec-report's, line
for line, on the store it names (tests/fixtures/capture/transformer_h100.tgz)."""

import re
from pathlib import Path

from click.testing import CliRunner

from kinspect.cli import main

DOCS = Path(__file__).parent.parent / "docs"


def test_commands_md_program_table_is_what_vec_report_prints(transformer):  # noqa: F811
    text = (DOCS / "commands.md").read_text()
    block = re.search(r"```\n(tf: 22 kernels.*?)```", text, re.S)[1].splitlines()
    r = CliRunner(env={"COLUMNS": "130"}).invoke(main, ["vec-report", str(transformer)])
    assert r.exit_code == 0, r.output
    printed = [line.replace(str(transformer), "tf") for line in r.output.splitlines()]
    for line in block:
        assert line in printed, line
