from skills.find_addresses import FindAddresses, FindAddressesInput


def run(text: str) -> list[str]:
    return FindAddresses().execute(FindAddressesInput(text=text)).addresses


def test_finds_addresses_in_order() -> None:
    found = run("to ann@example.org, then bob@mail.example.com.")
    assert found == ["ann@example.org", "bob@mail.example.com"]


def test_keeps_repeats() -> None:
    assert run("a@b.io a@b.io") == ["a@b.io", "a@b.io"]


def test_nothing_found() -> None:
    assert run("no at sign here") == []


def test_long_run_without_an_address() -> None:
    assert run("a" * 100_000) == []
    assert run("x" * 50_000 + " ann@example.org") == ["ann@example.org"]
