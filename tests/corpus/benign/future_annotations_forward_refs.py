# side_effect: READ_ONLY
# tricky: postponed annotations and string forward references in models
"""Postponed annotations and string forward references in models."""

from __future__ import annotations

from typing import Optional
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class Node(BaseModel):
    label: str
    children: "list[Node]" = []
    parent: Optional["Node"] = None


class FutureAnnotationsForwardRefsInput(BaseModel):
    text: str = ""
    tree: Node | None = None


class FutureAnnotationsForwardRefsOutput(BaseModel):
    result: str


class FutureAnnotationsForwardRefs(BaseSkill[FutureAnnotationsForwardRefsInput, FutureAnnotationsForwardRefsOutput]):
    name = "future_annotations_forward_refs"
    description = "Corpus skill: postponed annotations and string forward references in models."
    input_model = FutureAnnotationsForwardRefsInput
    output_model = FutureAnnotationsForwardRefsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FutureAnnotationsForwardRefsInput) -> FutureAnnotationsForwardRefsOutput:
        def depth(node: Node | None) -> int:
            return 0 if node is None else 1 + max((depth(c) for c in node.children), default=0)

        return FutureAnnotationsForwardRefsOutput(result=str(depth(input_data.tree)))
