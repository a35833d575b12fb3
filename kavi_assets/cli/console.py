"""The CLI's rich consoles: lines never wrap, so output read by scripts stays one line per record."""

from rich.console import Console, ConsoleDimensions

from kavi.settings import read_setting

# Tables (for people) still need a width when the stream is not a terminal (wide enough that the demo summary
# keeps whole model names and failure kinds in a log); plain lines ignore it. $COLUMNS, when set, wins.
PIPE_WIDTH = 200


class _CliConsole(Console):
    """A terminal's width (or $COLUMNS) when there is one, PIPE_WIDTH for a pipe or a file. Decided at each print,
    not when the module is imported, so `COLUMNS=100 kavi ... | less` lays tables out for 100 columns."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        if not self.is_terminal and not read_setting("columns").isdigit():
            return ConsoleDimensions(PIPE_WIDTH, dims.height)
        return dims

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def make_console(*, stderr: bool = False) -> Console:
    """A console that never wraps a printed line (soft wrap), whatever the width or the length of a path."""
    return _CliConsole(stderr=stderr, soft_wrap=True)
