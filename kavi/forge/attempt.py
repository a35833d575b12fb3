"""What the steps of one attempt share: the statuses a build row moves through and the canonical bytes of the
documents each step stores."""

import json
from datetime import UTC, datetime
from typing import Any

BUILD_OK = "BUILT"
BUILD_FAILED = "BUILD_FAILED"
VERIFIED = "VERIFIED"
VERIFY_FAILED = "VERIFY_FAILED"


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, indent=2, default=str).encode()


def now() -> str:
    return datetime.now(UTC).isoformat()
