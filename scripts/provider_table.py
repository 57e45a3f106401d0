#!/usr/bin/env python3
"""Print the provider compatibility table (markdown) for docs/environments.md.

Usage: .venv/bin/python scripts/provider_table.py [--allowed-hosts HOST ...]

Every cell is computed by orharbor.providers from the installed Harbor's own code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from orharbor.providers import DEFAULT_ALLOWED_HOSTS, compatibility_table, format_markdown  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allowed-hosts", nargs="+", default=list(DEFAULT_ALLOWED_HOSTS),
                        help="allowlist of the allowlist columns")
    args = parser.parse_args()
    sys.stdout.write(format_markdown(compatibility_table(allowed_hosts=tuple(args.allowed_hosts))))


if __name__ == "__main__":
    main()
