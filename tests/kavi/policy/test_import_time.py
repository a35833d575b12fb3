"""The import-time family: pure module-level code (tables built from constants and pure calls) passes; module-level
code that reaches anything else, or runs unbounded, is refused with the allowed way."""

import hashlib
import os

import pytest

from kavi.policy.families import import_time
from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from kavi.skills.loading import exec_skill_module
from kavi.verdicts import Violation

HEADER = '''\
import collections
import enum
import itertools
import json
import logging
import math
import re
import string
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

'''
FOOTER = '''

class In(BaseModel):
    text: str


class Out(BaseModel):
    value: str


class Probe(BaseSkill[In, Out]):
    name = "probe"
    description = "Module-level tables."
    input_model = In
    output_model = Out
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: In) -> Out:
        return Out(value=input_data.text)
'''

PURE_TABLES = {
    "comprehension": "SQUARES = [n * n for n in range(100)]",
    "dict zip": "KEYS = ('a', 'b')\nVALUES = (1, 2)\nTABLE = dict(zip(KEYS, VALUES))",
    "builtins": "WORDS = ('pear', 'fig', 'apple')\nLONGEST = max(len(w) for w in WORDS)\n"
                "ORDER = sorted(WORDS)\nINDEX = {w: i for i, w in enumerate(ORDER)}\nTOTAL = sum(range(10))",
    "compiled regex": "WORD = re.compile(r'[a-z]+')\nESCAPED = re.escape('a.b')",
    "pure constants": "LETTERS = frozenset(string.ascii_lowercase)\nROOT2 = math.sqrt(2)",
    "str methods": "STOP = frozenset('a an the of'.split())\nUPPER = [w.upper() for w in STOP]\n"
                   "TRANS = str.maketrans({'a': '4'})",
    "pure constructors": "PRICE = Decimal('1.50')\nHALF = Fraction(1, 2)\nNS = uuid.uuid5(uuid.NAMESPACE_URL, 'x')\n"
                         "DEFAULTS = json.loads('{\"a\": 1}')\nCOUNTS = collections.Counter('hello')",
    "module logger": "logger = logging.getLogger(__name__)",
    "namedtuple rows": "Row = collections.namedtuple('Row', 'name size')\nROWS = [Row('a', 1), Row('b', 2)]\n"
                       "BY_NAME = {r.name.lower(): r for r in ROWS}",
    "dataclass rows": "@dataclass(frozen=True)\nclass Item:\n    sku: str\n"
                      "    tags: list[str] = field(default_factory=list)\n\n\n"
                      "ITEMS = (Item('a'), Item('b'))\nBY_SKU = {i.sku: i for i in ITEMS}",
    "enum iteration": "class Colour(enum.Enum):\n    RED = 1\n    BLUE = 2\n\n\n"
                      "BY_NAME = {c.name.lower(): c for c in Colour}\nVALUES = [str(c.value) for c in Colour]",
    "bounded powers": "UNITS = ('B', 'KiB', 'MiB')\nSIZES = [1024 ** i for i in range(len(UNITS))]",
    "itertools": "MOVES = [(a, b) for a, b in itertools.product((-1, 1), repeat=2)]",
    "lambda table": "OPS = {'+': lambda a, b: a + b, '-': lambda a, b: a - b}",
}

REFUSED = {
    # what runs, what it should be refused for
    "module function": ("def table():\n    return {'a': 1}\n\n\nTABLE = table()", "'table' is not a pure call"),
    "class with __post_init__": ("@dataclass\nclass Item:\n    n: int\n\n    def __post_init__(self) -> None:\n"
                                 "        self.n += 1\n\n\nITEM = Item(1)", "'Item' is not a pure call"),
    "enum with its own __lt__": ("class Colour(enum.Enum):\n    RED = 1\n\n    def __lt__(self, other: object) -> bool:"
                                 "\n        return True\n\n\nORDER = sorted(Colour)", "'sorted' is not a pure call"),
    "user __str__ through str()": ("class Colour(enum.Enum):\n    RED = 1\n\n    def __str__(self) -> str:\n"
                                   "        return 'red'\n\n\nNAME = str(Colour.RED)", "'str' is not a pure call"),
    "method of an enum member": ("class Colour(enum.Enum):\n    RED = 'r'\n\n    def lower(self) -> str:\n"
                                 "        return 'x'\n\n\nLOW = Colour.RED.lower()", "is not a pure call"),
    "huge range": ("BIG = [n for n in range(10 ** 9)]", "not bounded"),
    "nested comprehension": ("GRID = [(a, b) for a in range(10 ** 6) for b in range(10 ** 6)]", "not bounded"),
    "materialised product": ("ALL = list(itertools.product(range(100), repeat=5))", "not bounded"),
    "unbounded power": ("N = len('abc')\nBIG = [2 ** (n * 10 ** 6) for n in range(N)]", "power"),
    "effectful call": ("logging.basicConfig(filename='x.log')", "runs at import time"),
    "a file at import time": ("DATA = open('x').read()", "POL-FS"),
    "unknown iterable": ("WORDS = frozenset(w for w in json.loads('[]'))", "not bounded"),
}


def probe(body: str) -> str:
    return HEADER + body + "\n" + FOOTER


def scan(body: str) -> list[Violation]:
    return scan_source(probe(body), SideEffectClass.READ_ONLY)


@pytest.mark.parametrize("case", list(PURE_TABLES))
def test_pure_module_level_tables_pass(case: str) -> None:
    found = scan(PURE_TABLES[case])
    assert not found, "; ".join(v.render() for v in found)


@pytest.mark.parametrize("case", list(PURE_TABLES))
def test_pure_module_level_tables_really_run(case: str) -> None:
    """The tables are not only accepted: they import (the same loader `kavi run` and the acceptance gate use)."""
    data = probe(PURE_TABLES[case]).encode()
    module = exec_skill_module(f"probe_{abs(hash(case))}", data, hashlib.sha256(data).hexdigest())
    assert hasattr(module, "Probe")


@pytest.mark.parametrize("case", list(REFUSED))
def test_module_level_code_that_reaches_further_is_refused(case: str) -> None:
    body, needle = REFUSED[case]
    found = scan(body)
    assert found, f"{case} passed"
    assert any(needle in v.render() for v in found), [v.render() for v in found]
    assert all("; instead: " in v.why for v in found), [v.why for v in found]


def test_calls_to_the_modules_own_functions_are_refused_because_import_runs_in_the_forges_process() -> None:
    """Why a module's own functions may not run at import time: the loader `kavi run`, `kavi list` and the
    acceptance gate share executes the module body in the calling process, with no time limit of its own. A
    function body is scanned for capabilities, but it may loop for ever; the import-time rules only admit work
    whose size the source bounds."""
    assert "kavi list" in (import_time.__doc__ or "")
    data = probe("import os\n\nPID = os.getpid()").encode()
    # (the scan refuses os.getpid; the loader, which trusts its caller, shows where module code runs)
    assert any(v.rule_id == "POL-PROCESS" for v in scan("import os\n\nPID = os.getpid()"))
    module = exec_skill_module("probe_pid", data, hashlib.sha256(data).hexdigest())
    assert os.getpid() == module.PID


def test_singledispatch_registration_and_contextmanager_are_allowed() -> None:
    body = ("import contextlib\nimport functools\n\n\n@functools.singledispatch\ndef describe(v: object) -> str:\n"
            "    return 'other'\n\n\n@describe.register\ndef _(v: int) -> str:\n    return 'int'\n\n\n"
            "@contextlib.contextmanager\ndef nothing():  # type: ignore[no-untyped-def]\n    yield\n")
    assert not scan(body), [v.render() for v in scan(body)]


def test_register_on_a_plain_function_is_refused() -> None:
    body = "def table(v: object) -> str:\n    return ''\n\n\n@table.register\ndef _(v: int) -> str:\n    return 'int'\n"
    assert [v.rule_id for v in scan(body)] == ["POL-IMPORT-TIME"]


def test_a_chain_of_constants_is_decided_in_linear_time() -> None:
    """Each constant built from the next one twice: deciding plainness or size naively takes 2**n steps."""
    import time

    chain = "\n".join(f"C{i} = [C{i + 1}, C{i + 1}]" for i in range(60)) + "\nC60 = 'x'\n"
    body = chain + "UP = [w.upper() for w in C0]\nALL = sorted(C0)"
    t0 = time.perf_counter()
    found = scan(body)
    assert time.perf_counter() - t0 < 5
    assert not found, [v.render() for v in found]
