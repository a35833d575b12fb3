"""One reading of a skill's source: UTF-8 without a BOM or NUL, and no coding declaration but utf-8.

Python honours a PEP 263 cookie (`# -*- coding: utf-7 -*-`) when it compiles bytes, while the policy scan,
the invariants and a person read the same bytes as UTF-8: a cookie naming another codec lets code hide in what
every other reader sees as a comment. Every reader therefore goes through `decode_source`, and the loader
compiles the text it returns, never the raw bytes.
"""

import codecs
import io
import re
import tokenize

# Wider than Python's own pattern (which wants the comment to start the line after spaces, tabs or form
# feeds): any comment on the first two lines that names a codec counts.
_COOKIE = re.compile(rb"#.*?coding[:=][ \t]*([-\w.]+)")
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class SourceEncodingError(ValueError):
    """The bytes could be read in more than one way (or not at all): no gate and no loader takes them."""


def _first_lines(data: bytes) -> list[bytes]:
    """The first two lines as Python's tokenizer finds them (split at LF), and as universal newlines split them."""
    by_lf = data.split(b"\n", 2)[:2]
    universal = _LINE_BREAK.split(data, 2)[:2]
    return [*by_lf, *universal]


def _codec_is_utf8(name: str) -> bool:
    try:
        return codecs.lookup(name).name == "utf-8"
    except LookupError:
        return False


def source_problem(data: bytes) -> str | None:
    """Why these bytes are not one unambiguous UTF-8 text, or None when they are."""
    if data.startswith(codecs.BOM_UTF8):
        return "starts with a byte-order mark (skill source is UTF-8 without a BOM)"
    nul = data.find(b"\x00")
    if nul >= 0:
        return f"contains a NUL byte (at offset {nul})"
    try:
        data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as err:
        return f"is not UTF-8 (invalid byte at offset {err.start})"
    for line in _first_lines(data):
        match = _COOKIE.search(line)
        if match is not None:
            codec = match.group(1).decode("ascii", errors="replace")
            if not _codec_is_utf8(codec):
                return (f"declares the source encoding {codec!r} (only utf-8 is allowed: other readers would see "
                        f"other code)")
    try:
        detected, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        return f"has a coding declaration Python refuses ({err.msg})"
    if not _codec_is_utf8(detected):
        return f"is read by Python as {detected!r}, not utf-8"
    return None


def decode_source(data: bytes) -> str:
    """The one text every reader of a skill sees; raises SourceEncodingError when there is not exactly one."""
    problem = source_problem(data)
    if problem is not None:
        raise SourceEncodingError(f"the source {problem}")
    return data.decode("utf-8")
