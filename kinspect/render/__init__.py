"""Views: the terminal, the HTML report, plots, lexers and every `--json` (json.py). They read frozen
records and never make what they show."""
