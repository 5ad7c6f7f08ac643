"""The `kinspect` command: one thin module per command over kinspect.api (each registers itself on the
group in main.py); options several commands share are in options.py, progress lines in progress.py.

Errors the user can fix are KinspectErrors: one line, exit code 2, no traceback unless --debug.
"""

from kinspect.cli.main import main
from kinspect.cli import dump, ls, capture, vec_report, diff, report, bench, tune, repro, targets, show, schema  # noqa: F401  (each registers its command on main)

__all__ = ["main"]


if __name__ == "__main__":
    main()
