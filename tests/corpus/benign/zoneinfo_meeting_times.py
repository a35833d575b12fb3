# side_effect: READ_ONLY
# tricky: zoneinfo.ZoneInfo for time-zone conversion (reads the installed tz database only)
# family: dates
"""Show a meeting time in several IANA time zones."""

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ZoneinfoMeetingTimesInput(BaseModel):
    when: str
    source_zone: str
    zones: list[str]


class ZoneinfoMeetingTimesOutput(BaseModel):
    local_times: dict[str, str]
    unknown_zones: list[str]


class ZoneinfoMeetingTimes(BaseSkill[ZoneinfoMeetingTimesInput, ZoneinfoMeetingTimesOutput]):
    name = "zoneinfo_meeting_times"
    description = "Show a meeting time in several IANA time zones."
    input_model = ZoneinfoMeetingTimesInput
    output_model = ZoneinfoMeetingTimesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ZoneinfoMeetingTimesInput) -> ZoneinfoMeetingTimesOutput:
        try:
            start = datetime.fromisoformat(input_data.when).replace(tzinfo=ZoneInfo(input_data.source_zone))
        except (ZoneInfoNotFoundError, ValueError) as err:
            raise ValueError(f"bad time or zone: {err}") from err
        local_times: dict[str, str] = {}
        unknown: list[str] = []
        for zone in input_data.zones:
            try:
                local_times[zone] = start.astimezone(ZoneInfo(zone)).isoformat()
            except (ZoneInfoNotFoundError, ValueError):
                unknown.append(zone)
        return ZoneinfoMeetingTimesOutput(local_times=local_times, unknown_zones=unknown)
