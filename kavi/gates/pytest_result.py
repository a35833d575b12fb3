"""The line the pytest gate's plugin (kavi.gates.pytest_report, inside the sandbox) writes its report on, and the
forge (kavi.gates.testing) reads: a module of its own, so the forge never imports pytest to know it."""

RESULT_PREFIX = "KAVI-PYTEST-RESULT:"
