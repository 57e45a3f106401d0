"""Harbor's own dataset tools on an export folder, for the export tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def harbor_sync(folder: Path) -> str:
    """Harbor's own `harbor sync FOLDER` (recomputes every digest of dataset.toml and writes it back); its output."""
    done = subprocess.run(
        [Path(sys.executable).with_name("harbor"), "sync", str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, "HARBOR_TELEMETRY": "0", "COLUMNS": "200"},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout
