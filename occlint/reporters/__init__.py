"""Output formats: each is a view of the same report document (occlint.pipeline.document)."""

from __future__ import annotations

import importlib
from typing import Any

FORMATTERS = {
    "text": "occlint.reporters.text",
    "json": "occlint.reporters.json_format",
    "sarif": "occlint.reporters.sarif",
    "github": "occlint.reporters.github",
    "gitlab": "occlint.reporters.gitlab",
    "junit": "occlint.reporters.junit",
    "html": "occlint.reporters.html",
}


def render(fmt: str, doc: dict[str, Any], **options: Any) -> str:
    """Render ``doc`` in format ``fmt`` (each module exposes ``render(doc, **options)``).

    Kernel records held as JSON text (KernelRecords) are decoded for every format but JSON,
    which writes them as they are."""
    module = importlib.import_module(FORMATTERS[fmt])
    if fmt != "json":
        from occlint.model.records import KernelRecords

        if isinstance(doc.get("kernels"), KernelRecords):
            doc = {**doc, "kernels": list(doc["kernels"])}
    return module.render(doc, **options)
