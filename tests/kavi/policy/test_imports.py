"""The imports family: a pure use of every mixed module of the capability map passes, and its effectful part is
refused — where it is used and at the import that brought it in — with a message that names the allowed way."""

import textwrap

import pytest

from kavi.policy.policy import default_policy
from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from kavi.verdicts import Violation

POLICY = default_policy()
MIXED = sorted(name for name, e in POLICY.modules.items() if e.verdict == "mixed")

# module: (import lines, a pure expression, an effectful expression, the rule it must get, a word of the alternative)
CASES: dict[str, tuple[str, str, str, str, str]] = {
    "codecs": ("import codecs", "codecs.encode(text, 'rot13')", "codecs.open(text)", "POL-FS", "vault"),
    "configparser": ("import configparser", "configparser.ConfigParser().read_string(text)",
                     "configparser.ConfigParser().read([text])", "POL-FS", "read_string"),
    "gzip": ("import gzip", "gzip.compress(text.encode())", "gzip.open(text)", "POL-FS", "gzip.compress"),
    "bz2": ("import bz2", "bz2.compress(text.encode())", "bz2.BZ2File(text)", "POL-FS", "bz2.compress"),
    "lzma": ("import lzma", "lzma.compress(text.encode())", "lzma.open(text)", "POL-FS", "lzma.compress"),
    "xml": ("import xml.etree.ElementTree", "xml.etree.ElementTree.fromstring(text)", "xml.sax.parse(text)",
            "POL-FS", "fromstring"),
    "xml.etree": ("import xml.etree.ElementTree", "xml.etree.ElementTree.tostring(xml.etree.ElementTree.XML(text))",
                  "xml.etree.ElementInclude.include(text)", "POL-FS", "fromstring"),
    "xml.etree.ElementTree": ("import xml.etree.ElementTree as ET", "ET.fromstring(text)", "ET.parse(text)",
                              "POL-FS", "fromstring"),
    "xml.dom": ("import xml.dom.minidom", "xml.dom.minidom.parseString(text)", "xml.dom.pulldom.parse(text)",
                "POL-FS", "parseString"),
    "xml.dom.minidom": ("from xml.dom import minidom", "minidom.parseString(text)", "minidom.parse(text)", "POL-FS",
                        "parseString"),
    "xml.parsers": ("import xml.parsers.expat", "xml.parsers.expat.ParserCreate()", "xml.parsers.__file__",
                    "POL-INTROSPECTION", "pass values"),
    "mimetypes": ("import mimetypes", "mimetypes.guess_type(text)", "mimetypes.read_mime_types(text)", "POL-FS",
                  "guess_type"),
    "contextlib": ("import contextlib", "contextlib.suppress(ValueError)", "contextlib.redirect_stdout(None)",
                   "POL-TAMPER", "suppress"),
    "types": ("import types", "types.SimpleNamespace(a=text)", "types.FunctionType", "POL-DYNAMIC-CODE",
              "SimpleNamespace"),
    "uuid": ("import uuid", "uuid.uuid5(uuid.NAMESPACE_URL, text)", "uuid.uuid1()", "POL-PROCESS", "uuid4"),
    "random": ("import random", "random.Random(42).random()", "random.seed(42)", "POL-TAMPER", "random.Random(seed)"),
    "hashlib": ("import hashlib", "hashlib.sha256(text.encode()).hexdigest()", "hashlib.file_digest(None, 'sha256')",
                "POL-FS", "vault"),
    "zoneinfo": ("import zoneinfo", "zoneinfo.ZoneInfo('Europe/Paris')", "zoneinfo.ZoneInfo.from_file(text)",
                 "POL-FS", "ZoneInfo"),
    "calendar": ("import calendar", "calendar.month(2024, 5)", "calendar.setfirstweekday(6)", "POL-TAMPER",
                 "firstweekday"),
    "decimal": ("import decimal", "decimal.Decimal(text).quantize(decimal.Decimal('0.01'))",
                "decimal.getcontext()", "POL-TAMPER", "localcontext"),
    "time": ("import time", "time.perf_counter() + time.monotonic()", "time.sleep(1)", "POL-TAMPER", "monotonic"),
    "os": ("import os", "os.path.join(text, os.sep)", "os.system(text)", "POL-PROCESS", "os.path"),
    "os.path": ("import os.path", "os.path.splitext(os.path.basename(text))", "os.path.exists(text)", "POL-FS",
                "self.vault.exists"),
    "posixpath": ("import posixpath", "posixpath.normpath(text)", "posixpath.expanduser(text)", "POL-ENV", "vault"),
    "ntpath": ("import ntpath", "ntpath.splitdrive(text)", "ntpath.getsize(text)", "POL-FS", "self.vault"),
    "pathlib": ("import pathlib", "pathlib.PurePosixPath(text).with_suffix('.md').name",
                "pathlib.Path(text).read_text()", "POL-FS", "PurePosixPath"),
    "io": ("import io", "io.StringIO(text).read()", "io.FileIO(text)", "POL-FS", "io.StringIO"),
    "sys": ("import sys", "sys.maxsize + sys.float_info.max + sys.version_info[0]", "sys.modules", "POL-TAMPER",
            "sys.maxsize"),
    "logging": ("import logging", "logging.getLogger(__name__).info(text)", "logging.FileHandler(text)", "POL-FS",
                "getLogger(__name__)"),
    "urllib": ("import urllib.parse", "urllib.parse.quote(text)", "urllib.request.urlopen(text)", "POL-NETWORK",
               "self.http"),
    "http": ("import http", "http.HTTPStatus(404).phrase", "http.client.HTTPConnection(text)", "POL-NETWORK",
             "self.http"),
    "tokenize": ("import io\nimport tokenize", "list(tokenize.generate_tokens(io.StringIO(text).readline))",
                 "tokenize.open(text)", "POL-FS", "generate_tokens"),
    "kavi_assets.skills.base": ("import kavi_assets.skills.base as kb", "kb.SideEffectClass.READ_ONLY",
                                "kb.BaseModel", "POL-ESCAPE", "kavi_assets.skills.base"),
    "yaml": ("import yaml", "yaml.safe_load(text)", "yaml.load(text, yaml.Loader)", "POL-DYNAMIC-CODE", "safe_load"),
}

TEMPLATE = '''\
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass
{imports}


class In(BaseModel):
    text: str


class Out(BaseModel):
    value: str


class Probe(BaseSkill[In, Out]):
    name = "probe"
    description = "Uses one attribute of a mixed module."
    input_model = In
    output_model = Out
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: In) -> Out:
        text = input_data.text
        return Out(value=str({expr}))
'''


def skill(imports: str, expr: str) -> str:
    return TEMPLATE.format(imports=imports, expr=expr)


def scan(source: str) -> list[Violation]:
    return scan_source(source, SideEffectClass.READ_ONLY)


def test_every_mixed_module_has_a_case() -> None:
    assert set(MIXED) == set(CASES), sorted(set(MIXED) ^ set(CASES))


@pytest.mark.parametrize("module", sorted(CASES))
def test_pure_use_of_a_mixed_module_passes(module: str) -> None:
    imports, pure, _effect, _rule, _instead = CASES[module]
    found = scan(skill(imports, pure))
    assert not found, "; ".join(v.render() for v in found)


@pytest.mark.parametrize("module", sorted(CASES))
def test_effectful_part_of_a_mixed_module_is_refused_naming_the_alternative(module: str) -> None:
    imports, _pure, effect, rule, instead = CASES[module]
    found = scan(skill(imports, effect))
    hits = [v for v in found if v.rule_id == rule]
    assert hits, f"{module}: {effect} was not refused with {rule}: {[v.render() for v in found]}"
    assert all("; instead: " in v.why for v in found), [v.why for v in found]
    assert any(instead in v.why for v in hits), [v.why for v in hits]


def test_a_refused_use_is_reported_at_the_import_too() -> None:
    found = scan(skill("import os as o", "o.getenv('HOME')"))
    rules_at_import = {v.rule_id for v in found if v.source.strip() == "import os as o"}
    assert "POL-ENV" in rules_at_import
    assert any("self.secrets.get" in v.why for v in found)


def test_from_import_of_a_refused_attribute_is_refused() -> None:
    found = scan(skill("from os.path import exists", "exists(text)"))
    assert [v.rule_id for v in found] == ["POL-FS"] and "self.vault.exists(path)" in found[0].why


def test_a_walk_through_a_pure_module_into_an_effectful_one_is_refused() -> None:
    for imports, expr, rule in (("import typing", "typing.sys.modules", "POL-TAMPER"),
                                ("import json", "json.codecs.open(text)", "POL-FS"),
                                ("import os.path", "os.path.os.system(text)", "POL-PROCESS"),
                                ("import ast", "ast.sys._getframe()", "POL-INTROSPECTION"),
                                ("import logging", "logging.handlers.SocketHandler(text, 1)", "POL-FS")):
        found = scan(skill(imports, expr))
        assert rule in {v.rule_id for v in found}, (expr, [v.render() for v in found])


def test_values_a_module_returns_carry_refused_attributes() -> None:
    found = scan(skill("import logging", "logging.getLogger('dagster').handlers[0].stream.write(text)"))
    assert {"POL-FS"} <= {v.rule_id for v in found}
    # (.handlers and .stream start at the same column: one finding per rule and place is reported)
    assert any((".handlers" in v.why or ".stream" in v.why) and "logger.info" in v.why for v in found)
    assert not scan(skill("import json", "dict(handlers=1)['handlers']"))  # only where logging is imported


@pytest.mark.parametrize(("imports", "cls"), [("import socket", "NETWORK"), ("import urllib.request", "NETWORK"),
                                              ("import shutil", "FILE_WRITE"), ("import requests", "NETWORK")])
def test_modules_that_need_a_class_name_its_handle_even_for_that_class(imports: str, cls: str) -> None:
    source = skill(imports, "text").replace("SideEffectClass.READ_ONLY", f"SideEffectClass.{cls}")
    found = scan_source(source, SideEffectClass(cls))
    assert found and f"a capability of {cls} skills, only through its handle" in found[0].why
    assert "self." in found[0].why


def test_unknown_third_party_module_is_refused_with_the_way_to_find_pure_ones() -> None:
    found = scan(skill("import numpy", "numpy.zeros(3)"))
    assert found[0].rule_id == "POL-IMPORT" and "kavi policy show" in found[0].why


def test_source_template_is_valid() -> None:
    compile(textwrap.dedent(skill("import math", "math.pi")), "probe", "exec")
