"""What the write tests share: the emulator's tables and users, a connection to it, a
query over its MySQL face, and a DataFrame of every column kind ``w.dup`` takes."""

import datetime
import decimal

import daft
import pymysql
from conftest import ROOT_PASSWORD
from daft_doris import DorisConnection

INIT = """
CREATE DATABASE w;
CREATE TABLE w.dup (`id` INT NOT NULL, `name` VARCHAR(8) NULL, `amount` DECIMAL(10, 2) NULL,
  `day` DATE NULL, `ts` DATETIME(6) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE TABLE w.uniq (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL, `score` INT NULL)
  UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2
  PROPERTIES ("enable_unique_key_merge_on_write" = "true");
CREATE TABLE w.agg (`k` INT NOT NULL, `total` BIGINT SUM NULL) AGGREGATE KEY(`k`)
  DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE TABLE w.part (`id` INT NOT NULL, `name` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  PARTITION BY RANGE(`id`) (PARTITION p0 VALUES LESS THAN ("1000"))
  DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.typed (`id` INT NOT NULL, `j` JSON NULL, `ip` IPV6 NULL, `big` LARGEINT NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.nested (`id` INT NOT NULL, `tags` ARRAY<VARCHAR(3)> NULL,
  `person` STRUCT<name:VARCHAR(4), note:TEXT> NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.carried (`id` INT NOT NULL, `name` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.redirected (`id` INT NOT NULL, `name` VARCHAR(8) NULL, `amount` DECIMAL(10, 2) NULL,
  `day` DATE NULL, `ts` DATETIME(6) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE USER 'writer'@'%' IDENTIFIED BY 'wr1ter-pw';
GRANT SELECT_PRIV, LOAD_PRIV ON w.* TO 'writer'@'%';
"""


def conn(ports, **kwargs):
    if "username" not in kwargs:
        kwargs.setdefault("password", ROOT_PASSWORD)
    return DorisConnection(
        host=ports["host"], http_port=ports["fe_http_port"], mysql_port=ports["query_port"], **kwargs
    )


def query(ports, sql):
    c = pymysql.connect(
        host="127.0.0.1", port=ports["query_port"], user="root", password=ROOT_PASSWORD, database="w"
    )
    with c, c.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def frame(n, start=0):
    return daft.from_pydict(
        {
            "id": list(range(start, start + n)),
            "name": [f"n{i}" for i in range(start, start + n)],
            "amount": [decimal.Decimal(f"{i}.25") for i in range(start, start + n)],
            "day": [datetime.date(2024, 1, 1 + i % 28) for i in range(n)],
            "ts": [datetime.datetime(2024, 1, 1, 0, 0, i % 60, 5) for i in range(n)],
        }
    )


def summary(result):
    data = result.to_pydict()
    return {k: v[0] for k, v in data.items()}


def ids_in(ports, table):
    return sorted(r[0] for r in query(ports, f"SELECT id FROM {table}"))
