# side_effect: READ_ONLY
# tricky: graphlib.TopologicalSorter.static_order and CycleError
# family: algorithms
"""Order tasks so that each comes after its dependencies, or report the cycle."""

import graphlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class GraphlibTaskOrderInput(BaseModel):
    dependencies: dict[str, list[str]]


class GraphlibTaskOrderOutput(BaseModel):
    order: list[str]
    cycle: list[str]


class GraphlibTaskOrder(BaseSkill[GraphlibTaskOrderInput, GraphlibTaskOrderOutput]):
    name = "graphlib_task_order"
    description = "Order tasks so that each comes after its dependencies, or report the cycle."
    input_model = GraphlibTaskOrderInput
    output_model = GraphlibTaskOrderOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: GraphlibTaskOrderInput) -> GraphlibTaskOrderOutput:
        sorter = graphlib.TopologicalSorter(input_data.dependencies)
        try:
            return GraphlibTaskOrderOutput(order=list(sorter.static_order()), cycle=[])
        except graphlib.CycleError as err:
            return GraphlibTaskOrderOutput(order=[], cycle=[str(n) for n in err.args[1]])
