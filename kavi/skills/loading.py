"""How a skill's bytes become a module: one function, used by the runtime and by the acceptance gate alike.

A skill must not be able to tell whether it runs in a gate or for a user. Whatever honest code may read about
its own module — its `__name__` (for a logger, say), the file name in a traceback — is therefore the same in
both: the module is named after the skill and the hash of its bytes, and its code carries a canonical file
name, not the path it was read from (a sandbox path in the gates, the skills home at run time). What could
still tell the two apart (`__file__`, `sys.argv`, the environment, frames, `sys.modules`) the policy refuses.
"""

import linecache
import re
import sys
import types
from typing import Any

from kavi.skills.source import decode_source

MODULE_PREFIX = "kavi_skill_"
# The module forged skills import the contract from (`kavi_assets`, the layer above, re-exports `kavi.skills.base`).
CONTRACT_MODULE = "kavi_assets.skills.base"


def module_name(skill_name: str, digest: str) -> str:
    """`kavi_skill_<name>_<first 16 hex of sha256>`: unique per content, never importable by a statement."""
    safe = re.sub(r"\W", "_", skill_name)
    return f"{MODULE_PREFIX}{safe}_{digest[:16]}"


def canonical_filename(skill_name: str, digest: str) -> str:
    """The file name the skill's code objects carry, whatever path its bytes were read from."""
    return f"<kavi skill {skill_name} sha256:{digest[:16]}>"


def exec_skill_module(skill_name: str, data: bytes, digest: str) -> types.ModuleType:
    """Compile and execute exactly `data` as the skill's module, registered in sys.modules under its name.

    The bytes are decoded as the policy scan reads them (`decode_source`) and that text is compiled, so no coding
    declaration can give Python another reading. Raises SourceEncodingError (a ValueError) when the bytes are not
    one unambiguous UTF-8 text, SyntaxError/ValueError when they do not compile, and whatever the module raises
    while it runs (after taking its entry out of sys.modules again).
    """
    name = module_name(skill_name, digest)
    filename = canonical_filename(skill_name, digest)
    text = decode_source(data)
    code = compile(text, filename, "exec", dont_inherit=True)
    # Tracebacks show the skill's lines from this entry (a name in <> is never read from disk).
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    module = types.ModuleType(name, f"skill {skill_name} (sha256 {digest})")
    module.__file__ = filename
    # pydantic and dataclasses resolve annotations through sys.modules[cls.__module__].
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        if sys.modules.get(name) is module:
            del sys.modules[name]
        raise
    return module


def skill_classes(module: types.ModuleType) -> list[type[Any]]:
    """The BaseSkill subclasses the module itself defines."""
    from kavi.skills.base import BaseSkill

    return [obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, BaseSkill) and obj is not BaseSkill
            and obj.__module__ == module.__name__]
