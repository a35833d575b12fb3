# side_effect: READ_ONLY
# tries: call a function inside an annotation evaluated at import
# expect: POL-IMPORT-TIME
"""Call a function inside an annotation evaluated at import."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _probe() -> type:
    sum(range(10**9))
    return str


def helper(text: _probe()) -> str:
    return text


class ImporttimeAnnotationCallInput(BaseModel):
    text: str = ""


class ImporttimeAnnotationCallOutput(BaseModel):
    result: str


class ImporttimeAnnotationCall(BaseSkill[ImporttimeAnnotationCallInput, ImporttimeAnnotationCallOutput]):
    name = "importtime_annotation_call"
    description = "Corpus skill: call a function inside an annotation evaluated at import."
    input_model = ImporttimeAnnotationCallInput
    output_model = ImporttimeAnnotationCallOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeAnnotationCallInput) -> ImporttimeAnnotationCallOutput:
        return ImporttimeAnnotationCallOutput(result=input_data.text)
