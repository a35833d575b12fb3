# side_effect: READ_ONLY
# tricky: getattr over a module-level tuple of field names in a comprehension
"""Getattr over a module-level tuple of field names in a comprehension."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


FIELDS = ("title", "body")


class GetattrModuleConstantFieldsInput(BaseModel):
    title: str = ""
    body: str = ""


class GetattrModuleConstantFieldsOutput(BaseModel):
    result: str


class GetattrModuleConstantFields(BaseSkill[GetattrModuleConstantFieldsInput, GetattrModuleConstantFieldsOutput]):
    name = "getattr_module_constant_fields"
    description = "Corpus skill: getattr over a module-level tuple of field names in a comprehension."
    input_model = GetattrModuleConstantFieldsInput
    output_model = GetattrModuleConstantFieldsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: GetattrModuleConstantFieldsInput) -> GetattrModuleConstantFieldsOutput:
        values = [str(getattr(input_data, field)) for field in FIELDS]
        return GetattrModuleConstantFieldsOutput(result=" / ".join(values))
