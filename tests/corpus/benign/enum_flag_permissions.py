# side_effect: READ_ONLY
# tricky: enum.Flag members defined with enum.auto() in the class body
# family: types
"""Combine permission names into a flag value and explain a flag value."""

import enum
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Permission(enum.Flag):
    READ = enum.auto()
    WRITE = enum.auto()
    EXECUTE = enum.auto()
    ADMIN = READ | WRITE | EXECUTE


class EnumFlagPermissionsInput(BaseModel):
    names: list[str]
    value: int = 0


class EnumFlagPermissionsOutput(BaseModel):
    combined: int
    explained: list[str]
    is_admin: bool


class EnumFlagPermissions(BaseSkill[EnumFlagPermissionsInput, EnumFlagPermissionsOutput]):
    name = "enum_flag_permissions"
    description = "Combine permission names into a flag value and explain a flag value."
    input_model = EnumFlagPermissionsInput
    output_model = EnumFlagPermissionsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnumFlagPermissionsInput) -> EnumFlagPermissionsOutput:
        by_name = {m.name.lower(): m for m in Permission if m.name}
        combined = Permission(0)
        for name in input_data.names:
            if name.lower() not in by_name:
                raise ValueError(f"unknown permission {name!r}")
            combined |= by_name[name.lower()]
        given = Permission(input_data.value & Permission.ADMIN.value)
        explained = [m.name.lower() for m in (Permission.READ, Permission.WRITE, Permission.EXECUTE) if m in given and m.name]
        return EnumFlagPermissionsOutput(combined=combined.value, explained=explained, is_admin=Permission.ADMIN in combined)
