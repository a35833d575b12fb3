"""Bounded parsing of untrusted JSON (`kavi run` / `kavi chain` inputs) and the bounds YAML shares with it
(kavi.proposals.yaml_bounds parses proposal files: PyYAML is imported only where YAML is read).

Everything such a text can make us spend is bounded before it is spent: a file's size (checked before it is read
whole), YAML anchors and aliases (refused outright, so an alias bomb never expands), YAML merge keys, duplicate
mapping keys (YAML and JSON), nesting depth, string and key lengths, integer digits (before Python's int parsing
sees them), non-finite numbers, container sizes and the number of values. Each refusal is a BoundsError whose
message is one line saying what was refused and where.
"""

import json
import math
import os
import stat
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from kavi.proposals.text import printable

MAX_PROPOSAL_BYTES = 256 * 1024
MAX_DEPTH = 32
MAX_STRING_CHARS = 64 * 1024
MAX_KEY_CHARS = 1024
MAX_INT_DIGITS = 64
MAX_ITEMS = 10_000
MAX_VALUES = 200_000

MAX_RUN_INPUT_BYTES = 1024 * 1024
MAX_RUN_INPUT_DEPTH = 64


class BoundsError(ValueError):
    """Untrusted text that exceeds a bound or uses a refused construct; the message is one line."""


@dataclass(frozen=True)
class Bounds:
    max_bytes: int = MAX_PROPOSAL_BYTES
    max_depth: int = MAX_DEPTH
    max_string_chars: int = MAX_STRING_CHARS
    max_key_chars: int = MAX_KEY_CHARS
    max_int_digits: int = MAX_INT_DIGITS
    max_items: int = MAX_ITEMS  # per list or mapping
    max_values: int = MAX_VALUES  # in the whole document


PROPOSAL_BOUNDS = Bounds()
RUN_INPUT_BOUNDS = Bounds(max_bytes=MAX_RUN_INPUT_BYTES, max_depth=MAX_RUN_INPUT_DEPTH,
                          max_string_chars=MAX_RUN_INPUT_BYTES, max_items=100_000, max_values=1_000_000)


def short_repr(value: Any, width: int = 40) -> str:
    """`value`'s repr, cut to `width` characters."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def file_kind(mode: int) -> str:
    """What a file of this st_mode is, in words: 'a regular file', 'a directory', 'a named pipe (FIFO)'..."""
    kinds = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISLNK, "a symbolic link"))
    return next((word for test, word in kinds if test(mode)), "not a regular file")


def check_regular_file(path: Path) -> None:
    """Raise BoundsError (one line) unless `path` names a regular file (after links). Only stats it: a named
    pipe or a device is never opened, so nothing blocks or reads without end."""
    shown = printable(str(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise BoundsError(f"{shown}: no such file") from None
    except OSError as err:
        raise BoundsError(f"{shown}: cannot be read: {err.strerror or err}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BoundsError(f"{shown}: {file_kind(st.st_mode)}, not a regular file")


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file no larger than `max_bytes`; the size is checked before reading it whole.
    Opened without blocking and checked on the open descriptor, so a pipe or device swapped in is refused too."""
    shown = printable(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise BoundsError(f"{shown}: no such file") from None
    except OSError as err:
        raise BoundsError(f"{shown}: cannot be read: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
    except OSError as err:
        os.close(fd)
        raise BoundsError(f"{shown}: cannot be read: {err.strerror or err}") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise BoundsError(f"{shown}: {file_kind(st.st_mode)}, not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > max_bytes:
            raise BoundsError(f"{shown}: the file is {st.st_size} bytes, larger than the limit of {max_bytes} bytes")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise BoundsError(f"{shown}: the file is larger than the limit of {max_bytes} bytes")
    return data


def check_text_size(text: str, bounds: Bounds, what: str = "the text") -> None:
    size = len(text) if len(text) * 4 <= bounds.max_bytes else len(text.encode("utf-8", "surrogatepass"))
    if size > bounds.max_bytes:
        raise BoundsError(f"{what} is {size} bytes, larger than the limit of {bounds.max_bytes} bytes")


def check_tree(data: Any, bounds: Bounds) -> None:
    """Check a parsed document against `bounds`: depth, sizes, key types, numbers, value types."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    values = 0
    int_bits = int(bounds.max_int_digits * 3.33) + 4
    while stack:
        value, where, depth = stack.pop()
        loc = f"{where}: " if where else ""
        values += 1
        if values > bounds.max_values:
            raise BoundsError(f"the document holds more than {bounds.max_values} values")
        if isinstance(value, str):
            if len(value) > bounds.max_string_chars:
                raise BoundsError(f"{loc}a string of {len(value)} characters; at most "
                                  f"{bounds.max_string_chars} are allowed")
        elif value is None or isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if value.bit_length() > int_bits:
                raise BoundsError(f"{loc}an integer with more than {bounds.max_int_digits} digits")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise BoundsError(f"{loc}{value} is not allowed: numbers must be finite")
        elif isinstance(value, dict | list):
            if depth > bounds.max_depth:
                raise BoundsError(f"{loc}nested deeper than {bounds.max_depth} levels")
            if len(value) > bounds.max_items:
                kind = "mapping" if isinstance(value, dict) else "list"
                raise BoundsError(f"{loc}a {kind} of {len(value)} items; at most {bounds.max_items} are allowed")
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise BoundsError(f"{loc}mapping keys must be strings, not {type(key).__name__} "
                                          f"{short_repr(key)}")
                    if len(key) > bounds.max_key_chars:
                        raise BoundsError(f"{loc}a key of {len(key)} characters; at most {bounds.max_key_chars} "
                                          "are allowed")
                    shown = printable(key if len(key) <= 40 else key[:37] + "...")
                    stack.append((item, f"{where}.{shown}" if where else shown, depth + 1))
            else:
                stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, date):  # YAML timestamps; pydantic serialises them as ISO text
            continue
        else:
            raise BoundsError(f"{loc}a {type(value).__name__} value is not allowed; use JSON values")


# ------------------------------------------------------------------------------------------------ JSON


def parse_json_bounded(text: str, bounds: Bounds = PROPOSAL_BOUNDS, what: str = "the text") -> Any:
    """json.loads within `bounds`; malformed JSON still raises json.JSONDecodeError for the caller to word."""
    check_text_size(text, bounds, what)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise BoundsError(f"duplicate key {short_repr(key)}")
            out[key] = value
        return out

    def parse_int(digits: str) -> int:
        count = len(digits) - digits.startswith("-")
        if count > bounds.max_int_digits:
            raise BoundsError(f"an integer has {count} digits; at most {bounds.max_int_digits} are allowed")
        return int(digits)

    def parse_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise BoundsError(f"the number {short_repr(literal)} is not finite; numbers must be finite")
        return value

    def parse_constant(name: str) -> Any:
        raise BoundsError(f"{name} is not allowed: numbers must be finite")

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_int=parse_int, parse_float=parse_float,
                          parse_constant=parse_constant)
    except RecursionError:
        raise BoundsError(f"the document is nested deeper than {bounds.max_depth} levels") from None
    check_tree(data, bounds)
    return data
