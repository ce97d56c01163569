"""The main job on the embedded default: write a DataFrame to Doris, read it back.

`cargo xtask demo` starts the Doris emulator with the table below and runs this script with
the emulator's ports in `DORIS_PORTS`. Against a real Doris, set `DORIS_PORTS` to
`{"host": ..., "query_port": 9030, "fe_http_port": 8030, "fe_flight_port": 8070}` and create
the table first:

    CREATE TABLE analytics.events (`event_id` BIGINT NOT NULL, `name` VARCHAR(32) NULL,
      `score` INT NULL, `dt` DATE NOT NULL) DUPLICATE KEY(`event_id`)
    PARTITION BY RANGE(`dt`) (PARTITION p1 VALUES [("2024-01-01"), ("2024-02-01")),
                              PARTITION p2 VALUES [("2024-02-01"), ("2024-03-01")))
    DISTRIBUTED BY HASH(`event_id`) BUCKETS 2;
"""

import datetime
import json
import os

import daft
from daft_doris import DorisCatalog, DorisConnection, DorisTable, read_doris, write_doris

ports = json.loads(os.environ["DORIS_PORTS"])
host = ports.get("host", "127.0.0.1")

events = daft.from_pydict(
    {
        "event_id": list(range(1, 9)),
        "name": ["alice", "bob", "a_carol", "dave", "erin", "anna", "frank", None],
        "score": [91, 70, 85, None, 99, 88, 42, 80],
        "dt": [datetime.date(2024, 1 + i % 2, 3 + i) for i in range(8)],
    }
)
connection = DorisConnection(host=host, http_port=ports["fe_http_port"], mysql_port=ports["query_port"])
summary = write_doris(
    events,
    connection=connection,
    table=DorisTable("analytics", "events"),
    idempotence_key="demo-run-1",
)
print("write_doris summary (atomic, idempotence key 'demo-run-1'):")
summary.show()

for transport in ("mysql", "flight"):
    frame = read_doris(
        host=host,
        mysql_port=ports["query_port"],
        http_port=ports["fe_http_port"],
        flight_port=ports.get("fe_flight_port", 8070),
        database="analytics",
        table="events",
        transport=transport,
        split="auto",
        columns=("event_id", "name", "score", "dt"),
        filter=(daft.col("score") >= 80) & (daft.col("dt") >= datetime.date(2024, 2, 1)),
    )
    print(f"read_doris(transport={transport!r}, split='auto', score >= 80 and dt >= 2024-02-01):")
    frame.sort("event_id").show()

# The same table through Daft's catalog and SQL: Doris attached to a session as `doris`.
session = daft.Session()
session.attach(DorisCatalog(connection), alias="doris")
print("daft.sql through the Doris catalog:")
session.sql("SELECT name, score FROM doris.analytics.events WHERE score >= 85 ORDER BY score DESC").show()
