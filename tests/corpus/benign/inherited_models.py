# side_effect: READ_ONLY
# tricky: input and output models that inherit from a shared local base model
"""Input and output models that inherit from a shared local base model."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Stamped(BaseModel):
    version: int = 1


class InheritedModelsInput(Stamped):
    text: str = ""


class InheritedModelsOutput(Stamped):
    result: str


class InheritedModels(BaseSkill[InheritedModelsInput, InheritedModelsOutput]):
    name = "inherited_models"
    description = "Corpus skill: input and output models that inherit from a shared local base model."
    input_model = InheritedModelsInput
    output_model = InheritedModelsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: InheritedModelsInput) -> InheritedModelsOutput:
        return InheritedModelsOutput(result=input_data.text[::-1], version=input_data.version)
