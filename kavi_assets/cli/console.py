"""The CLI's rich consoles: lines never wrap, so output read by scripts stays one line per record."""

import sys

from rich.console import Console

# Tables (for people) still need a width when the stream is not a terminal (wide enough that the demo summary
# keeps whole model names and failure kinds in a log); plain lines ignore it.
PIPE_WIDTH = 200


def make_console(*, stderr: bool = False) -> Console:
    """A console that never wraps a printed line (soft wrap), whatever the width or the length of a path."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, soft_wrap=True, width=None if stream.isatty() else PIPE_WIDTH)
