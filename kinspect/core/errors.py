"""The errors kinspect reports to people.

Anything raised as a KinspectError is shown by the CLI as one line (`error: ...`) with exit
code 2 and no traceback (unless --debug). The message says what was wrong and what to do.
What kinspect leaves out and goes on without (a stage of a store that cannot be read) is a
KinspectWarning (`warn`): the CLI shows each as one line `warning: ...` on stderr.
"""

import warnings


class KinspectError(Exception):
    """A problem with the user's input or environment, explained in one line."""


class KinspectWarning(UserWarning):
    """Something kinspect left out and went on without, in one line."""


def warn(line: str) -> None:
    warnings.warn(line, KinspectWarning, stacklevel=2)


class UsageError(KinspectError):
    """Malformed option values: -p, --arg, -t, sizes."""


class NotFound(KinspectError):
    """A kernel, variant, stage, file or folder that does not exist."""


class CompileError(KinspectError):
    """Triton failed to compile a kernel; the message carries Triton's text and the Python line."""


class ParseError(KinspectError):
    """A stage's text could not be read; carries where (file and line) when known."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)
        self.source = source
        self.line = line


def did_you_mean(word: str, choices) -> str:
    """' did you mean X?' for the closest choice, or '' when none is close."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


# Warnings of the libraries kinspect runs that say nothing about the user's kernels, in kinspect's
# own processes: Triton 3.9 warns in every process that TRITON_DEFAULT_FP_FUSION is unset (kinspect
# records the fusion setting per variant), and torch without NumPy (kinspect's core install, as on a
# RISC-V board) warns that it failed to initialize NumPy, which kinspect never hands it.
FOREIGN_NOISE = ("TRITON_DEFAULT_FP_FUSION is unset", "Failed to initialize NumPy")


def quiet_foreign_noise() -> None:
    import warnings

    for message in FOREIGN_NOISE:
        warnings.filterwarnings("ignore", message=message)
