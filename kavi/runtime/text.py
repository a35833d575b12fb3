"""Text the audit can always write: lone surrogates escaped (shared by the records and the contained worker)."""

import re

SURROGATE = re.compile("[\ud800-\udfff]")


def escape_text(text: str) -> str:
    """`text` with every lone surrogate written as its JSON escape (\\udXXX), so it can always be encoded as UTF-8.
    Inside JSON text the escape decodes back to the same character; in a message it shows what was there."""
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
