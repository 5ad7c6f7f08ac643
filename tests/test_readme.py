"""The README stays short, its links lead somewhere, and every kinspect command it shows parses
(option names, option values click checks, arguments); the cheap ones print what it says."""

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from kinspect.cli import main

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"


def commands(text: str) -> list[list[str]]:
    """`kinspect ...` lines in the README's code blocks (a `$ ` prompt, continuation lines joined)."""
    found = []
    for block in re.findall(r"```(?:bash)?\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.removeprefix("$ ").split("  #")[0].strip()
            if not line.startswith("kinspect "):
                continue
            for part in line.split("&&"):
                words = shlex.split(part)
                if words and words[0] == "kinspect":
                    found.append(words[1:])
    return found


def test_readme_is_short_and_its_links_exist():
    assert README.stat().st_size <= 15 * 1024
    for link in re.findall(r"\]\(([^)#]+)", README.read_text()):
        assert (ROOT / link).exists(), link


def test_every_readme_and_docs_command_parses():
    found = commands(README.read_text())
    assert len(found) >= 10
    for page in sorted((ROOT / "docs").glob("*.md")):
        found += commands(page.read_text())
    for args in found:
        command = main.commands[args[0]]
        with main.make_context("kinspect", list(args), resilient_parsing=False) as ctx:
            sub = command.make_context(args[0], list(args[1:]), parent=ctx)
            assert sub.params is not None, args


def test_the_readme_mistake_prints_what_it_says():
    text = README.read_text()
    shown = text.split("$ kinspect diff softmax -p BLOCK_SIZE=256,512\n", 1)[1].splitlines()[0]
    r = CliRunner().invoke(main, ["diff", "softmax", "-p", "BLOCK_SIZE=256,512"])
    assert r.exit_code == 2 and r.output.strip() == shown
