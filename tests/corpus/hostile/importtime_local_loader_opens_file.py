# side_effect: READ_ONLY
# tries: a module-level call into a local function that opens a file (the call looks like a pure table builder)
# expect: POL-IMPORT-TIME POL-FS
"""Load a table from disk at import time through a helper."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _load_table() -> dict[str, str]:
    with open("/etc/passwd") as fh:
        return dict(line.split(":", 1) for line in fh if ":" in line)


TABLE = _load_table()


class ImporttimeLocalLoaderOpensFileInput(BaseModel):
    user: str = "root"


class ImporttimeLocalLoaderOpensFileOutput(BaseModel):
    result: str


class ImporttimeLocalLoaderOpensFile(BaseSkill[ImporttimeLocalLoaderOpensFileInput, ImporttimeLocalLoaderOpensFileOutput]):
    name = "importtime_local_loader_opens_file"
    description = "Load a table from disk at import time through a helper."
    input_model = ImporttimeLocalLoaderOpensFileInput
    output_model = ImporttimeLocalLoaderOpensFileOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimeLocalLoaderOpensFileInput) -> ImporttimeLocalLoaderOpensFileOutput:
        return ImporttimeLocalLoaderOpensFileOutput(result=TABLE.get(input_data.user, ""))
