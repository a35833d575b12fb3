# side_effect: READ_ONLY
# tricky: difflib.unified_diff with file names that are only labels
# family: text-formats
"""Show a unified diff between two versions of a text."""

import difflib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DifflibUnifiedPatchInput(BaseModel):
    before: str
    after: str
    label: str = "note.md"


class DifflibUnifiedPatchOutput(BaseModel):
    diff: str
    changed_lines: int
    ratio: float


class DifflibUnifiedPatch(BaseSkill[DifflibUnifiedPatchInput, DifflibUnifiedPatchOutput]):
    name = "difflib_unified_patch"
    description = "Show a unified diff between two versions of a text."
    input_model = DifflibUnifiedPatchInput
    output_model = DifflibUnifiedPatchOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DifflibUnifiedPatchInput) -> DifflibUnifiedPatchOutput:
        old = input_data.before.splitlines(keepends=True)
        new = input_data.after.splitlines(keepends=True)
        lines = list(difflib.unified_diff(old, new, fromfile=f"a/{input_data.label}", tofile=f"b/{input_data.label}"))
        changed = sum(1 for ln in lines if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
        ratio = difflib.SequenceMatcher(None, input_data.before, input_data.after).ratio()
        return DifflibUnifiedPatchOutput(diff="".join(lines), changed_lines=changed, ratio=round(ratio, 4))
