def pytest_runtest_makereport(item, call):
    pass
