from skills.word_count import WordCount, WordCountInput


def run(text: str) -> tuple[int, int, int]:
    out = WordCount().execute(WordCountInput(text=text))
    return out.words, out.lines, out.characters


def test_simple_sentence() -> None:
    assert run("the quick brown fox") == (4, 1, 19)


def test_multiple_lines_and_spaces() -> None:
    assert run("a  b\n\nc\n") == (3, 3, 8)


def test_empty_text() -> None:
    assert run("") == (0, 0, 0)
