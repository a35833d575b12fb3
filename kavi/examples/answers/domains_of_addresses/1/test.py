from skills.domains_of_addresses import DomainsOfAddresses, DomainsOfAddressesInput


def run(addresses: list[str]) -> tuple[list[str], int]:
    out = DomainsOfAddresses().execute(DomainsOfAddressesInput(addresses=addresses))
    return out.domains, out.count


def test_distinct_sorted_lowercased() -> None:
    assert run(["a@Y.org", "b@x.org", "c@y.org"]) == (["x.org", "y.org"], 3)


def test_empty() -> None:
    assert run([]) == ([], 0)


def test_ignores_text_without_at() -> None:
    assert run(["not-an-address"]) == ([], 1)
