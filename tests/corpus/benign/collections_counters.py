# side_effect: READ_ONLY
# tricky: Counter, defaultdict, deque and a module-level namedtuple
"""Counter, defaultdict, deque and a module-level namedtuple."""

from collections import Counter, defaultdict, deque, namedtuple
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


Pair = namedtuple("Pair", ["word", "count"])


class CollectionsCountersInput(BaseModel):
    text: str = ""


class CollectionsCountersOutput(BaseModel):
    result: str


class CollectionsCounters(BaseSkill[CollectionsCountersInput, CollectionsCountersOutput]):
    name = "collections_counters"
    description = "Corpus skill: Counter, defaultdict, deque and a module-level namedtuple."
    input_model = CollectionsCountersInput
    output_model = CollectionsCountersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CollectionsCountersInput) -> CollectionsCountersOutput:
        counts = Counter(input_data.text.lower().split())
        by_len: defaultdict[int, list[str]] = defaultdict(list)
        for word in counts:
            by_len[len(word)].append(word)
        recent = deque(counts, maxlen=3)
        top = [Pair(w, c) for w, c in counts.most_common(2)]
        return CollectionsCountersOutput(result=f"{top} {dict(by_len)} {list(recent)}")
