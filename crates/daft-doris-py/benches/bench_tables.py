"""The benchmarks' tables: their DDL and row makers, and the Flight read shapes."""

from __future__ import annotations

COLUMNS_DDL = (
    "`id` BIGINT NOT NULL, `i32` INT NULL, `amount` DECIMAL(18, 4) NULL, `day` DATE NULL, "
    "`ts` DATETIME(6) NULL, `short` VARCHAR(16) NULL, `long` STRING NULL, `f` DOUBLE NULL"
)


def make_table(n: int, start: int = 0):
    """`n` rows × 8 mixed columns (ints, decimal, date, datetime(6), short and long strings,
    a double, nulls every 10th row of `i32`)."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + n, dtype=np.int64)
    i32 = pa.array((ids % 1000 - 500).astype(np.int32), mask=(ids % 10 == 0))
    amount = pa.array(ids * 12345 % 10**12, pa.int64()).cast(pa.decimal128(19, 0)).cast(pa.decimal128(18, 4))
    day = pa.array((19723 + ids % 365).astype(np.int32), pa.int32()).cast(pa.date32())
    ts = pa.array(1_704_067_200_000_000 + ids * 1_000_003, pa.int64()).cast(pa.timestamp("us"))
    short = pa.array(np.char.add("s", (ids % 100).astype(str)))
    long = pa.array(np.char.add("a fairly long text value that repeats for every row #", ids.astype(str)))
    f = pa.array(ids / 3.0)
    names = ["id", "i32", "amount", "day", "ts", "short", "long", "f"]
    return pa.table([pa.array(ids), i32, amount, day, ts, short, long, f], names=names)


STRINGS_DDL = (
    "`id` BIGINT NOT NULL, `name` VARCHAR(64) NULL, `city` VARCHAR(32) NULL, "
    "`comment` STRING NULL, `payload` STRING NULL"
)
NUMERIC_DDL = (
    "`id` BIGINT NOT NULL, `a` BIGINT NULL, `b` INT NULL, `c` SMALLINT NULL, `d` DOUBLE NULL, "
    "`e` FLOAT NULL, `f` BIGINT NULL, `g` DOUBLE NULL"
)


def make_strings(n: int, start: int = 0):
    """`n` rows: an id and four text columns (short, short with nulls, ~60 and ~150 bytes)."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + n, dtype=np.int64)
    name = pa.array(np.char.add("customer-", (ids % 50_000).astype(str)))
    city = pa.array(np.char.add("city ", (ids % 300).astype(str)), mask=(ids % 7 == 0))
    comment = pa.array(np.char.add("a comment of moderate length written for row number ", ids.astype(str)))
    payload = pa.array(np.char.add("x" * 140 + " #", ids.astype(str)))
    return pa.table(
        [pa.array(ids), name, city, comment, payload], names=["id", "name", "city", "comment", "payload"]
    )


def make_numeric(n: int, start: int = 0):
    """`n` rows: an id and seven numeric columns of four widths (nulls every 10th row of `b`)."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + n, dtype=np.int64)
    columns = [
        pa.array(ids),
        pa.array(ids * 7919),
        pa.array((ids % 100_000).astype(np.int32), mask=(ids % 10 == 0)),
        pa.array((ids % 30_000).astype(np.int16)),
        pa.array(ids / 7.0),
        pa.array((ids % 1000 / 3.0).astype(np.float32)),
        pa.array(ids // 3),
        pa.array(np.sqrt(ids.astype(np.float64))),
    ]
    return pa.table(columns, names=["id", "a", "b", "c", "d", "e", "f", "g"])


# Flight read shapes: (workload number, description, table, DDL, rows maker, loads). The same
# rows loaded in many small loads leave many small rowsets, so the server sends many small
# batches (Doris scans rowset by rowset).
FLIGHT_SHAPES = (
    ("2", "8 mixed columns", "r", COLUMNS_DDL, make_table, 1),
    ("2b", "8 mixed columns, 200 loads (small rowsets)", "fl", COLUMNS_DDL, make_table, 200),
    ("2c", "5 text columns", "fs", STRINGS_DDL, make_strings, 1),
    ("2d", "8 numeric columns", "fn", NUMERIC_DDL, make_numeric, 1),
)
FLIGHT_GOAL = ">= 1.3"


def flight_tables_sql() -> str:
    """CREATE TABLE statements of the Flight shapes' tables (besides `r`)."""
    return "".join(
        f"CREATE TABLE bench.{table} ({ddl}) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
        for _, _, table, ddl, _, _ in FLIGHT_SHAPES
        if table != "r"
    )
