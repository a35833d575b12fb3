# side_effect: READ_ONLY
# tricky: module-level datetime constants (datetime(...), timezone.utc, timedelta) used as epochs
# family: module-tables
"""Convert timestamps between Unix, Excel and GPS epochs."""

from datetime import datetime, timedelta, timezone
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
EXCEL_EPOCH = datetime(1899, 12, 30, tzinfo=timezone.utc)
GPS_EPOCH = datetime(1980, 1, 6, tzinfo=timezone.utc)
ONE_DAY = timedelta(days=1)


class TableDatetimeEpochsInput(BaseModel):
    unix_seconds: float


class TableDatetimeEpochsOutput(BaseModel):
    iso: str
    excel_serial: float
    gps_seconds: float


class TableDatetimeEpochs(BaseSkill[TableDatetimeEpochsInput, TableDatetimeEpochsOutput]):
    name = "table_datetime_epochs"
    description = "Convert timestamps between Unix, Excel and GPS epochs."
    input_model = TableDatetimeEpochsInput
    output_model = TableDatetimeEpochsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableDatetimeEpochsInput) -> TableDatetimeEpochsOutput:
        moment = UNIX_EPOCH + timedelta(seconds=input_data.unix_seconds)
        return TableDatetimeEpochsOutput(iso=moment.isoformat(), excel_serial=round((moment - EXCEL_EPOCH) / ONE_DAY, 6),
                   gps_seconds=(moment - GPS_EPOCH).total_seconds())
