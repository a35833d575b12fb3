from skills.word_count import WordCount, WordCountInput


def run(text: str) -> tuple[int, int, int]:
    out = WordCount().execute(WordCountInput(text=text))
    return out.words, out.lines, out.characters


def test_simple_sentence() -> None:
    assert run("the quick brown fox\n") == (4, 1, 20)


def test_two_lines() -> None:
    assert run("a b\nc\n") == (3, 2, 6)


def test_empty_text() -> None:
    assert run("") == (0, 0, 0)
