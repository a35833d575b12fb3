from scripts.isbn_check import isbn_check


def test_isbn10() -> None:
    assert isbn_check("0-306-40615-2") == {"valid": True, "kind": "ISBN-10"}


def test_isbn13() -> None:
    assert isbn_check("978-0-306-40615-7") == {"valid": True, "kind": "ISBN-13"}


def test_bad_digit() -> None:
    assert isbn_check("0-306-40615-3")["valid"] is False


def test_strict() -> None:
    assert isbn_check("0-306-40615-2", strict=True)["valid"] is False
    assert isbn_check("0306406152", strict=True)["valid"] is True
