from skills.slugify_title import SlugifyTitle, SlugifyTitleInput


def slug(title: str, max_length: int = 60) -> str:
    return SlugifyTitle().execute(SlugifyTitleInput(title=title, max_length=max_length)).slug


def test_basic_title() -> None:
    assert slug("Hello, World!") == "hello-world"


def test_accents_are_folded() -> None:
    assert slug("Crème Brûlée Recipes") == "creme-brulee-recipes"


def test_truncates_without_trailing_hyphen() -> None:
    assert slug("one two three", max_length=8) == "one-two"


def test_only_symbols_gives_empty() -> None:
    assert slug("!!!") == ""
