from skills.extract_emails import ExtractEmails, ExtractEmailsInput


def test_finds_addresses() -> None:
    out = ExtractEmails().execute(ExtractEmailsInput(text="mail a@b.org or c.d@e.co.uk"))
    assert out.emails == ["a@b.org", "c.d@e.co.uk"]


def test_dedupes() -> None:
    assert ExtractEmails().execute(ExtractEmailsInput(text="x@y.io x@y.io")).emails == ["x@y.io"]


def test_none() -> None:
    assert ExtractEmails().execute(ExtractEmailsInput(text="nothing here")).emails == []
