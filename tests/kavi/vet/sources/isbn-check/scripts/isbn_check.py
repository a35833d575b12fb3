"""ISBN-10 and ISBN-13 check digits."""

from typing import Any


def _clean(isbn: str, strict: bool) -> str | None:
    if strict:
        return isbn if isbn.isalnum() else None
    return isbn.replace("-", "").replace(" ", "")


def _isbn10(s: str) -> bool:
    if len(s) != 10 or not s[:9].isdigit() or not (s[9].isdigit() or s[9] in "xX"):
        return False
    total = sum((10 - i) * int(c) for i, c in enumerate(s[:9]))
    total += 10 if s[9] in "xX" else int(s[9])
    return total % 11 == 0


def _isbn13(s: str) -> bool:
    if len(s) != 13 or not s.isdigit():
        return False
    total = sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(s))
    return total % 10 == 0


def isbn_check(isbn: str, strict: bool | None = None) -> dict[str, Any]:
    s = _clean(isbn, bool(strict))
    if s is not None and _isbn10(s):
        return {"valid": True, "kind": "ISBN-10"}
    if s is not None and _isbn13(s):
        return {"valid": True, "kind": "ISBN-13"}
    return {"valid": False, "kind": None}
