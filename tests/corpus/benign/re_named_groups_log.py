# side_effect: READ_ONLY
# tricky: a verbose module-level re.compile with named groups and finditer
# family: text-formats
"""Parse access-log lines into fields and count status codes."""

import re
from collections import Counter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


LINE = re.compile(r"""
    (?P<ip>\d{1,3}(?:\.\d{1,3}){3})\s\S+\s\S+\s
    \[(?P<when>[^\]]+)\]\s
    "(?P<method>[A-Z]+)\s(?P<path>\S+)\s[^"]*"\s
    (?P<status>\d{3})\s(?P<size>\d+|-)
""", re.VERBOSE)


class ReNamedGroupsLogInput(BaseModel):
    log: str


class ReNamedGroupsLogOutput(BaseModel):
    requests: list[dict[str, str]]
    statuses: dict[str, int]
    unparsed: int


class ReNamedGroupsLog(BaseSkill[ReNamedGroupsLogInput, ReNamedGroupsLogOutput]):
    name = "re_named_groups_log"
    description = "Parse access-log lines into fields and count status codes."
    input_model = ReNamedGroupsLogInput
    output_model = ReNamedGroupsLogOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ReNamedGroupsLogInput) -> ReNamedGroupsLogOutput:
        lines = [ln for ln in input_data.log.splitlines() if ln.strip()]
        requests = [m.groupdict() for ln in lines if (m := LINE.match(ln))]
        return ReNamedGroupsLogOutput(requests=requests, statuses=dict(Counter(r["status"] for r in requests)),
                   unparsed=len(lines) - len(requests))
