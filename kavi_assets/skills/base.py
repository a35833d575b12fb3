"""The skill contract as skills import it: `from kavi_assets.skills.base import BaseSkill, SideEffectClass`.

The contract lives in the core (`kavi.skills.base`); this path is the one every forged skill names, so it stays.
"""

from kavi.skills.base import (
    NO_MODEL,
    BaseSkill,
    HttpHandle,
    ModelHandle,
    NoModel,
    SecretsHandle,
    SideEffectClass,
    SkillContext,
    SkillContextError,
    VaultHandle,
)

__all__ = [
    "NO_MODEL",
    "BaseSkill",
    "HttpHandle",
    "ModelHandle",
    "NoModel",
    "SecretsHandle",
    "SideEffectClass",
    "SkillContext",
    "SkillContextError",
    "VaultHandle",
]
