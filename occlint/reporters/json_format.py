"""``--format json``: the report document as is (schema: docs/schema/)."""

from __future__ import annotations

import json
from typing import Any


def render(doc: dict[str, Any], **_: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
