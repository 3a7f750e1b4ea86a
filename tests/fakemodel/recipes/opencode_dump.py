"""Dump an OpenCode database as text: the schema, then every row of every non-empty table.

Test tooling for the OpenCode recipe (reviewers read the dumps without sqlite3).  Rows are in
rowid order (tables without rowid: primary-key order), one JSON object per line; a `data` column
holding JSON is shown parsed, so its keys read in the order OpenCode wrote them.
"""

from __future__ import annotations

import json
import sqlite3
import sys


def _cell(name: str, value: object) -> object:
    if name == "data" and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, bytes):
        return {"blob_hex": value.hex()}
    return value


def main(path: str) -> None:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    print(f"# {path.rsplit('/', 1)[-1]}: SQLite {sqlite3.sqlite_version} dump")
    print(
        f"# PRAGMA journal_mode={con.execute('PRAGMA journal_mode').fetchone()[0]}"
        f" user_version={con.execute('PRAGMA user_version').fetchone()[0]}"
    )
    print("\n## schema\n")
    for (sql,) in con.execute("select sql from sqlite_master where sql is not null order by type desc, name"):
        print(sql + ";")
    tables = [
        row[0]
        for row in con.execute(
            "select name from sqlite_master where type='table' and name not like 'sqlite_%' order by name"
        )
    ]
    for table in tables:
        count = con.execute(f'select count(*) from "{table}"').fetchone()[0]
        if not count:
            continue
        cursor = con.execute(f'select * from "{table}"')
        names = [d[0] for d in cursor.description]
        print(f"\n## {table} ({count} rows; columns: {', '.join(names)})\n")
        for row in cursor:
            record = {n: _cell(n, v) for n, v in zip(names, row, strict=True)}
            print(json.dumps(record, ensure_ascii=False))
    empty = [t for t in tables if not con.execute(f'select count(*) from "{t}"').fetchone()[0]]
    print(f"\n## empty tables\n\n{', '.join(empty)}")


if __name__ == "__main__":
    main(sys.argv[1])
