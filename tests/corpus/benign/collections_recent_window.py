# side_effect: READ_ONLY
# tricky: collections.deque(maxlen), Counter.most_common, ChainMap and OrderedDict
# family: algorithms
"""Track the most common events in a sliding window of recent events."""

from collections import ChainMap, Counter, OrderedDict, deque
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CollectionsRecentWindowInput(BaseModel):
    events: list[str]
    window: int = 5
    overrides: dict[str, str] = {}


class CollectionsRecentWindowOutput(BaseModel):
    recent: list[str]
    most_common: list[tuple[str, int]]
    labels: dict[str, str]


class CollectionsRecentWindow(BaseSkill[CollectionsRecentWindowInput, CollectionsRecentWindowOutput]):
    name = "collections_recent_window"
    description = "Track the most common events in a sliding window of recent events."
    input_model = CollectionsRecentWindowInput
    output_model = CollectionsRecentWindowOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CollectionsRecentWindowInput) -> CollectionsRecentWindowOutput:
        recent: deque[str] = deque(maxlen=max(1, input_data.window))
        for event in input_data.events:
            recent.append(event)
        common = Counter(recent).most_common(3)
        labels = ChainMap(input_data.overrides, {e: e.upper() for e in recent})
        ordered = OrderedDict((e, labels[e]) for e in recent)
        return CollectionsRecentWindowOutput(recent=list(recent), most_common=common, labels=dict(ordered))
