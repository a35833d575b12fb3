# side_effect: READ_ONLY
# tries: import subprocess inside execute under an alias and call it
# expect: POL-PROCESS
"""Import subprocess inside execute under an alias and call it."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ProcessSubprocessInnerImportInput(BaseModel):
    text: str = ""


class ProcessSubprocessInnerImportOutput(BaseModel):
    result: str


class ProcessSubprocessInnerImport(BaseSkill[ProcessSubprocessInnerImportInput, ProcessSubprocessInnerImportOutput]):
    name = "process_subprocess_inner_import"
    description = "Corpus skill: import subprocess inside execute under an alias and call it."
    input_model = ProcessSubprocessInnerImportInput
    output_model = ProcessSubprocessInnerImportOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ProcessSubprocessInnerImportInput) -> ProcessSubprocessInnerImportOutput:
        import subprocess as sp

        return ProcessSubprocessInnerImportOutput(result=sp.check_output(["uname", "-a"], text=True))
