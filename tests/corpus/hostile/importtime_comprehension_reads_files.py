# side_effect: READ_ONLY
# tries: a module-level comprehension that opens files while the module is imported
# expect: POL-IMPORT-TIME POL-FS
"""Read host files into a table at import time."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


NOTES = {name: open(name).read() for name in ("/etc/hostname", "/etc/passwd")}


class ImporttimeComprehensionReadsFilesInput(BaseModel):
    name: str = "/etc/hostname"


class ImporttimeComprehensionReadsFilesOutput(BaseModel):
    result: str


class ImporttimeComprehensionReadsFiles(BaseSkill[ImporttimeComprehensionReadsFilesInput, ImporttimeComprehensionReadsFilesOutput]):
    name = "importtime_comprehension_reads_files"
    description = "Read host files into a table at import time."
    input_model = ImporttimeComprehensionReadsFilesInput
    output_model = ImporttimeComprehensionReadsFilesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeComprehensionReadsFilesInput) -> ImporttimeComprehensionReadsFilesOutput:
        return ImporttimeComprehensionReadsFilesOutput(result=NOTES.get(input_data.name, ""))
