"""The shipped tables' parsed mirrors (occlint.tomlfile.read_shipped_toml): each is its
TOML as tomllib parses it, made from these very bytes; a stale or broken mirror is not
used (the TOML is parsed instead), so an edited table is never read from an old mirror."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from occlint.devices.db import _db_root
from occlint.tomlfile import mirror_of, read_shipped_toml, write_mirror

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SHIPPED = sorted(_db_root().rglob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_each_shipped_table_has_its_mirror(path):
    """Run ``python -m occlint.tomlfile device_db/*.toml device_db/*/*.toml`` after editing
    a table: this fails until its mirror is written again."""
    mirror = json.loads(mirror_of(path).read_text())
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    assert mirror["table"] == table
    assert read_shipped_toml(path, ValueError) == table


def test_a_stale_or_broken_mirror_is_not_used(tmp_path):
    source = _db_root() / "launch_model.toml"
    path = tmp_path / "launch_model.toml"
    shutil.copy(source, path)
    write_mirror(path)
    path.write_text(path.read_text() + '\n[extra]\nnote = "an edit after the mirror"\n')
    assert read_shipped_toml(path, ValueError)["extra"] == {"note": "an edit after the mirror"}
    mirror_of(path).write_text("{not json")
    assert "extra" in read_shipped_toml(path, ValueError)
    path.write_text("[broken")
    with pytest.raises(ValueError, match="invalid TOML"):
        read_shipped_toml(path, ValueError)
