# side_effect: READ_ONLY
# tricky: STOPWORDS = frozenset(...) and a sorted() tuple built at module level
# family: module-tables
"""Extract keywords from a text by dropping stop words."""

import re
from collections import Counter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


STOPWORDS = frozenset("a an and are as at be by for from in is it of on or that the to was were with".split())
SORTED_STOPWORDS = tuple(sorted(STOPWORDS))
WORD = re.compile(r"[a-z']+")


class TableSortedStopwordsInput(BaseModel):
    text: str
    top: int = 5


class TableSortedStopwordsOutput(BaseModel):
    keywords: list[str]
    stopword_count: int


class TableSortedStopwords(BaseSkill[TableSortedStopwordsInput, TableSortedStopwordsOutput]):
    name = "table_sorted_stopwords"
    description = "Extract keywords from a text by dropping stop words."
    input_model = TableSortedStopwordsInput
    output_model = TableSortedStopwordsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableSortedStopwordsInput) -> TableSortedStopwordsOutput:
        words = WORD.findall(input_data.text.lower())
        counts = Counter(w for w in words if w not in STOPWORDS)
        return TableSortedStopwordsOutput(keywords=[w for w, _ in counts.most_common(max(0, input_data.top))],
                   stopword_count=sum(1 for w in words if w in SORTED_STOPWORDS))
