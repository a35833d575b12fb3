"""The capability map (kavi/policy/capability_map.yaml): every standard-library module decided, each with a
reason and, when refused, the allowed way; the import list agrees with it; it is policy data (digest, tightening)."""

import importlib
import sys
from pathlib import Path

import pytest
import yaml

from kavi.policy.policy import CAPABILITY_MAP, PolicyError, default_policy, load_policy, policy_digest
from tests.factories import REPO

POLICY = default_policy()
STDLIB = sorted(sys.stdlib_module_names)
IMPORTABLE = sorted(name for name, e in POLICY.modules.items() if e.verdict in ("pure", "mixed"))
# Submodules the brief names: each is listed (decided on its own), not only inherited from its package.
NAMED_SUBMODULES = ("os.path", "logging.handlers", "logging.config", "urllib.parse", "urllib.request",
                    "xml.etree.ElementTree", "email.parser", "email.utils", "concurrent.futures", "importlib.resources",
                    "importlib.metadata", "collections.abc", "http.client", "html.parser", "xml.dom.minidom")


def test_every_stdlib_module_has_its_own_entry() -> None:
    assert len(STDLIB) == 305
    missing = [m for m in STDLIB if m not in POLICY.modules]
    assert not missing, f"undecided standard-library modules: {missing}"


@pytest.mark.parametrize("name", NAMED_SUBMODULES)
def test_named_submodules_are_listed(name: str) -> None:
    assert name in POLICY.modules


def test_every_entry_has_a_reason_and_every_refusal_an_alternative() -> None:
    for name, entry in POLICY.modules.items():
        assert entry.reason.strip(), name
        if entry.verdict in ("needs", "refused"):
            assert entry.instead.strip() and entry.rule.startswith("POL-"), name
        if entry.verdict == "needs":
            assert entry.needs in ("READ_ONLY", "FILE_WRITE", "NETWORK", "SECRET_READ"), name
        for attr, refusal in {**entry.refuse, **entry.objects}.items():
            assert refusal.reason.strip(), f"{name}.{attr}"
            assert (refusal.instead or entry.instead).strip(), f"{name}.{attr}"


def test_private_modules_are_refused() -> None:
    private = [m for m in STDLIB if m.startswith("_") and m != "__future__"]
    assert private and all(POLICY.modules[m].verdict == "refused" for m in private)


def test_the_import_list_is_exactly_the_importable_part_of_the_map() -> None:
    listed = {m for mods in POLICY.imports.values() for m in mods}
    assert listed == set(IMPORTABLE)


@pytest.mark.parametrize("name", IMPORTABLE)
def test_importable_modules_import_cleanly_and_their_pure_names_exist(name: str) -> None:
    """The scanner imports allowed modules to follow attribute paths: each must import without doing anything,
    and every name its entry calls pure must really be there (a typo would refuse honest code)."""
    module = importlib.import_module(name)
    found = POLICY.module_entry(name)
    assert found is not None
    pure = found[1].pure or []
    for attr in pure:
        if f"{name}.{attr}" in POLICY.modules:
            importlib.import_module(f"{name}.{attr}")  # a submodule is an attribute once something imports it
    absent = [a for a in pure if not hasattr(module, a)]
    assert not absent, f"{name}: {absent}"


def test_inheritance_of_submodules() -> None:
    assert POLICY.importable("json.decoder", "READ_ONLY")  # a pure package's submodule
    assert POLICY.importable("email.mime.text", "READ_ONLY")
    assert not POLICY.importable("multiprocessing.pool", "READ_ONLY")  # a refused package's
    assert not POLICY.importable("xml.sax.saxutils", "READ_ONLY")
    assert POLICY.module_entry("logging.nonexistent") is None  # a mixed package lists its submodules
    assert POLICY.module_entry("json._private") is None  # private parts are never inherited
    assert not POLICY.importable("pydantic.v1", "READ_ONLY") and POLICY.importable("pydantic.fields", "READ_ONLY")


def test_network_modules_need_the_network_class_and_its_handle() -> None:
    for name in ("socket", "urllib.request", "http.client", "requests", "httpx"):
        entry = POLICY.modules[name]
        assert entry.verdict == "needs" and entry.needs == "NETWORK" and "self.http" in entry.instead, name
        assert not POLICY.importable(name, "NETWORK"), name


def test_the_digest_covers_the_map() -> None:
    changed = POLICY.model_copy(update={"modules": {**POLICY.modules, "re": POLICY.modules["socket"]}})
    assert policy_digest(changed) != policy_digest(POLICY)


def _policy_file(tmp_path: Path, data: dict[str, object]) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_user_file_may_refuse_a_pure_module(tmp_path: Path) -> None:
    policy = load_policy(_policy_file(tmp_path, {"modules": {"csv": {"verdict": "refused", "reason": "not here",
                                                                     "instead": "split lines yourself"}}}))
    assert not policy.importable("csv", "READ_ONLY")
    assert "csv" not in policy.imports["all"]


def test_a_user_file_cannot_allow_a_refused_module(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="only tighten"):
        load_policy(_policy_file(tmp_path, {"modules": {"subprocess": {"verdict": "pure", "reason": "trust me"}}}))
    with pytest.raises(PolicyError, match="only tighten"):
        load_policy(_policy_file(tmp_path, {"modules": {"os": {"verdict": "pure", "reason": "all of it"}}}))


def test_the_map_is_data_shipped_with_the_package() -> None:
    assert CAPABILITY_MAP.suffix == ".yaml" and CAPABILITY_MAP.parent.name == "policy"
    data = yaml.safe_load(CAPABILITY_MAP.read_text(encoding="utf-8"))
    assert set(data["modules"]) == set(POLICY.modules)
    pyproject = REPO / "pyproject.toml"
    assert '"policy/*.yaml"' in pyproject.read_text(encoding="utf-8")
