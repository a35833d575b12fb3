"""Text from untrusted files checked for what a person reads: control characters, fixture URLs, shown names.

A terminal obeys what it is sent: an escape sequence (ESC `[`), a lone carriage return or a C1 control in a
proposal's description would rewrite what `kavi status`, the UI or a log shows. Text meant for people may hold
line breaks and tabs; names and other one-line fields hold no control character at all.
"""

import unicodedata
from urllib.parse import urlsplit

FIXTURE_URL_SCHEMES = ("http", "https")
_SHOWN_CHARS = 80

_CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x09: "TAB", 0x0A: "LF", 0x0B: "VT", 0x0C: "FF",
                  0x0D: "CR", 0x1B: "ESC", 0x7F: "DEL", 0x85: "NEL", 0x9B: "CSI"}


def printable(text: str) -> str:
    """`text` with every non-printable character written as its escape (ESC as \\x1b), for one-line messages."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _shown(text: str) -> str:
    cut = text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
    return repr(cut)


def _control_name(ch: str) -> str:
    code = ord(ch)
    name = _CONTROL_NAMES.get(code) or ("a C1 control" if 0x80 <= code <= 0x9F else "a C0 control")
    return f"U+{code:04X} ({name})"


def control_character_problem(text: str, *, multiline: bool) -> str | None:
    """Why `text` may not be used, or None. Multi-line text keeps line feeds, tabs and CRLF line ends; every other
    control character (NUL, a lone CR, ESC, DEL, C1 controls) is refused, as is any control in one-line text."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) != "Cc":
            continue
        if multiline and (ch in "\n\t" or (ch == "\r" and text[i + 1 : i + 2] == "\n")):
            continue
        if ch == "\r" and multiline:
            return (f"contains a carriage return not followed by a line feed (U+000D) at character {i + 1}; "
                    "text may hold line breaks and tabs, no other control characters")
        allowed = "text may hold line breaks and tabs, no other control characters" if multiline \
            else "this field may hold no control characters"
        return f"contains the control character {_control_name(ch)} at character {i + 1}; {allowed}"
    return None


def check_text(text: str, *, multiline: bool) -> str:
    """Return `text`, or raise ValueError saying which control character it may not hold."""
    problem = control_character_problem(text, multiline=multiline)
    if problem is not None:
        raise ValueError(problem)
    return text


def check_fixture_url(url: str) -> str:
    """Return `url` if it is an absolute http or https URL with a host; raise ValueError (one line) if not."""
    problem = control_character_problem(url, multiline=False)
    if problem is not None:
        raise ValueError(f"fixture URL {_shown(url)} {problem}")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as err:
        raise ValueError(f"fixture URL {_shown(url)} is not a valid URL ({err})") from None
    allowed = " or ".join(f"{s}://" for s in FIXTURE_URL_SCHEMES)
    scheme = parts.scheme.lower()
    if not scheme:
        raise ValueError(f"fixture URL {_shown(url)} has no scheme; fixtures take {allowed} URLs only")
    if scheme not in FIXTURE_URL_SCHEMES:
        raise ValueError(f"fixture URL {_shown(url)} uses the scheme {scheme!r}; fixtures take {allowed} URLs only")
    if not host:
        raise ValueError(f"fixture URL {_shown(url)} has no host")
    return url
