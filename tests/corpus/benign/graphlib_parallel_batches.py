# side_effect: READ_ONLY
# tricky: graphlib.TopologicalSorter.prepare/get_ready/done to compute parallel stages
# family: algorithms
"""Group tasks into stages that can run in parallel."""

from graphlib import CycleError, TopologicalSorter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class GraphlibParallelBatchesInput(BaseModel):
    dependencies: dict[str, list[str]]


class GraphlibParallelBatchesOutput(BaseModel):
    stages: list[list[str]]


class GraphlibParallelBatches(BaseSkill[GraphlibParallelBatchesInput, GraphlibParallelBatchesOutput]):
    name = "graphlib_parallel_batches"
    description = "Group tasks into stages that can run in parallel."
    input_model = GraphlibParallelBatchesInput
    output_model = GraphlibParallelBatchesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: GraphlibParallelBatchesInput) -> GraphlibParallelBatchesOutput:
        sorter: TopologicalSorter[str] = TopologicalSorter(input_data.dependencies)
        try:
            sorter.prepare()
        except CycleError as err:
            raise ValueError(f"dependency cycle: {err.args[1]}") from err
        stages: list[list[str]] = []
        while sorter.is_active():
            ready = sorted(sorter.get_ready())
            stages.append(ready)
            sorter.done(*ready)
        return GraphlibParallelBatchesOutput(stages=stages)
