# side_effect: READ_ONLY
# tricky: a skill that looks for dangerous tokens, so its strings name them
"""A skill that looks for dangerous tokens, so its strings name them."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


DANGEROUS = ("__import__", "eval(", "exec(", "os.system", "subprocess.Popen", "__subclasses__")


class CodeScannerStringsInput(BaseModel):
    text: str = ""


class CodeScannerStringsOutput(BaseModel):
    result: str


class CodeScannerStrings(BaseSkill[CodeScannerStringsInput, CodeScannerStringsOutput]):
    name = "code_scanner_strings"
    description = "Corpus skill: a skill that looks for dangerous tokens, so its strings name them."
    input_model = CodeScannerStringsInput
    output_model = CodeScannerStringsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CodeScannerStringsInput) -> CodeScannerStringsOutput:
        found = [token for token in DANGEROUS if token in input_data.text]
        return CodeScannerStringsOutput(result="suspicious: " + ", ".join(found) if found else "clean")
