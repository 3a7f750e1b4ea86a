"""A Parquet table of findings that a data team can query (needs ``[parquet]``: pyarrow).

Two ways in:

    python examples/parquet_findings.py findings.parquet sessions/ more/sessions/
    transcript-doctor lint s3://bucket/sessions/ --scheduler tcp://host:8786 -o jsonl \\
        | python examples/parquet_findings.py findings.parquet

The first lints local paths through the Python API; the second reads the CLI's ``jsonl``
objects (any run, local or on a cluster) from standard input.  One row per finding.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import transcript_doctor as td

SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("reader", pa.string()),
        ("rule", pa.string()),
        ("name", pa.string()),
        ("severity", pa.dictionary(pa.int8(), pa.string())),
        ("line", pa.int64()),
        ("record", pa.int64()),
        ("pointer", pa.string()),
        ("message", pa.string()),
        ("fixable", pa.bool_()),
        ("fix_applicability", pa.string()),
    ]
)


def table(records: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows in the CLI's ``-o json`` fields (``Finding.to_dict()`` or a parsed jsonl line)."""
    rows = list(records)
    columns = {name: [row.get(name) for row in rows] for name in SCHEMA.names}
    return pa.Table.from_pydict(columns, schema=SCHEMA)


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("usage: parquet_findings.py OUT.parquet [PATH ...]  (no PATH: jsonl on stdin)\n")
        return 2
    out, paths = argv[0], argv[1:]
    if paths:
        records = [finding.to_dict() for path in paths for finding in td.lint_path(path)]
    else:
        records = [json.loads(line) for line in sys.stdin if line.strip()]
    pq.write_table(table(records), out)
    print(f"{out}: {len(records)} finding(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
