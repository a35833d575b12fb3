"""One line of `kavi doctor`: a named check, its status (ok, warn or fail), what was found and the fix."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}
