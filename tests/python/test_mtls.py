"""Mutual TLS end to end: the emulator started with ``--tls-client-auth required`` asks
every client of its FE and BE faces (HTTP, MySQL, Flight) for a certificate its test CA
signed. PyMySQL, a client nobody here wrote, shows the MySQL face behaves as a MySQL
server that requires client certificates; then writes, split reads over MySQL and Flight
reads present the certificate given as ``tls_client_cert_file``/``tls_client_key_file``,
1.1's ``mysql_options`` ``ssl_cert``/``ssl_key`` or ADBC's ``mtls_cert_chain``/
``mtls_private_key``, and fail without it (crates/doris-read/tests/transports/mtls.rs
tries each crate's link)."""

import os
import pickle
import tempfile

import daft
import pymysql
import pytest
from conftest import run_emulator
from daft_doris import (
    ConfigurationError,
    DaftOlapError,
    DorisConnection,
    DorisDataSource,
    DorisTable,
    read_doris,
    write_doris,
)

INIT = """
CREATE DATABASE s;
CREATE TABLE s.t (`id` INT NOT NULL, `v` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 4;
"""


@pytest.fixture(scope="module")
def doris():
    with tempfile.TemporaryDirectory() as tls_dir:
        args = ("--tls-dir", tls_dir, "--tls-client-auth", "required")
        with run_emulator(INIT, extra_args=args) as ports:
            doris = {
                **ports,
                "ca": os.path.join(tls_dir, "ca.pem"),
                "client": os.path.join(tls_dir, "client.pem"),
                "client_key": os.path.join(tls_dir, "client-key.pem"),
            }
            c = pymysql.connect(
                host="127.0.0.1",
                port=doris["query_port"],
                user="root",
                ssl={"ca": doris["ca"], "cert": doris["client"], "key": doris["client_key"]},
                autocommit=True,
            )
            with c, c.cursor() as cur:
                cur.execute("INSERT INTO s.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
            yield doris


def pymysql_count(doris, **ssl):
    c = pymysql.connect(
        host="127.0.0.1",
        port=doris["query_port"],
        user="root",
        database="s",
        ssl={"ca": doris["ca"], **ssl},
        connect_timeout=10,
    )
    with c, c.cursor() as cur:
        cur.execute("SELECT count(*) FROM t")
        return cur.fetchone()[0]


def test_the_mysql_face_requires_a_client_certificate_as_a_mysql_server_does(doris):
    with pytest.raises(pymysql.err.OperationalError):
        pymysql_count(doris)
    assert pymysql_count(doris, cert=doris["client"], key=doris["client_key"]) >= 3


def connection(doris, **extra):
    return DorisConnection(
        host="127.0.0.1",
        http_port=doris["fe_http_port"],
        mysql_port=doris["query_port"],
        http_secure=True,
        tls_ca_file=doris["ca"],
        mysql_ssl_mode="verify_identity",
        **extra,
    )


def test_a_write_presents_the_connections_client_certificate(doris):
    before = pymysql_count(doris, cert=doris["client"], key=doris["client_key"])
    data = daft.from_pydict({"id": [10, 11], "v": ["x", "y"]})
    with pytest.raises(DaftOlapError):
        write_doris(data, connection=connection(doris), table=DorisTable("s", "t"))
    assert pymysql_count(doris, cert=doris["client"], key=doris["client_key"]) == before
    mtls = connection(doris, tls_client_cert_file=doris["client"], tls_client_key_file=doris["client_key"])
    summary = write_doris(data, connection=mtls, table=DorisTable("s", "t"), two_phase_commit=True)
    assert summary.to_pydict()["loaded_rows"] == [2]
    assert pymysql_count(doris, cert=doris["client"], key=doris["client_key"]) == before + 2


def where(doris):
    """The table and the FE's faces, over TLS verified against the emulator's CA."""
    return dict(
        host="127.0.0.1",
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        flight_port=doris["fe_flight_port"],
        http_secure=True,
        tls_ca_file=doris["ca"],
        database="s",
        table="t",
    )


def read(doris, **options):
    return read_doris(**where(doris), **options)


def test_split_mysql_reads_present_the_certificate_from_either_spelling(doris):
    expected = pymysql_count(doris, cert=doris["client"], key=doris["client_key"])
    split = dict(transport="mysql", split="auto", discovery_policy="error")
    files = dict(tls_client_cert_file=doris["client"], tls_client_key_file=doris["client_key"])
    verified = {"ssl_mode": "verify_identity"}
    assert len(read(doris, **split, **files, mysql_options=verified).to_pydict()["id"]) == expected
    # 1.1 code passes PyMySQL's keywords: they give the MySQL link its certificate (the
    # FE's HTTP face, which plans the split, gets the connection's).
    for mysql_options in (
        {"ssl_ca": doris["ca"], "ssl_cert": doris["client"], "ssl_key": doris["client_key"]},
        {"ssl": {"ca": doris["ca"], "cert": doris["client"], "key": doris["client_key"]}},
    ):
        frame = read(doris, transport="mysql", mysql_options=mysql_options)
        assert len(frame.to_pydict()["id"]) == expected, mysql_options
    with pytest.raises(DaftOlapError):
        read(doris, **split, mysql_options=verified).collect()


def test_flight_reads_present_the_adbc_client_certificate(doris):
    expected = pymysql_count(doris, cert=doris["client"], key=doris["client_key"])
    with open(doris["client"]) as chain, open(doris["client_key"]) as key:
        adbc = {
            "adbc.flight.sql.client_option.mtls_cert_chain": chain.read(),
            "adbc.flight.sql.client_option.mtls_private_key": key.read(),
        }
    # The MySQL link (the table's schema) presents the connection-level certificate.
    files = dict(tls_client_cert_file=doris["client"], tls_client_key_file=doris["client_key"])
    frame = read(doris, transport="flight", flight_secure=True, flight_options=adbc, **files)
    assert len(frame.to_pydict()["id"]) == expected
    frame = read(doris, transport="flight", flight_secure=True, **files)
    assert len(frame.to_pydict()["id"]) == expected
    # The key as text is a secret a pickled source (every Ray task) would carry: refused,
    # naming the files to give instead (docs/security.md, "Secrets in pickles").
    source = DorisDataSource(
        **where(doris), transport="flight", flight_secure=True, flight_options=adbc, **files
    )
    with pytest.raises(ConfigurationError, match="tls_client_key_file") as refused:
        pickle.dumps(source)
    assert "PRIVATE KEY" not in str(refused.value)
    # So does the read's request (its pickle carries its arguments as given).
    from daft_doris import _native

    request = _native.ReadRequest("d", "t", transport="flight", flight_secure=True, flight_options=adbc)
    with pytest.raises(ConfigurationError, match="tls_client_key_file") as refused:
        pickle.dumps(request)
    assert "PRIVATE KEY" not in str(refused.value)
    travels = DorisDataSource(**where(doris), transport="flight", flight_secure=True, **files)
    assert pickle.loads(pickle.dumps(travels)).read().count_rows() == expected
    key_only = {
        "adbc.flight.sql.client_option.mtls_private_key": adbc[
            "adbc.flight.sql.client_option.mtls_private_key"
        ]
    }
    with pytest.raises(ConfigurationError, match="give both or neither") as info:
        read(doris, transport="flight", flight_secure=True, flight_options=key_only, **files)
    assert "PRIVATE KEY" not in str(info.value)


def test_bad_client_certificate_settings_are_named_without_the_key(doris, tmp_path):
    with pytest.raises(ConfigurationError, match="tls_client_cert_file and tls_client_key_file go together"):
        connection(doris, tls_client_cert_file=doris["client"])
    not_a_key = tmp_path / "not-a-key.pem"
    not_a_key.write_text("-----BEGIN PRIVATE KEY-----\n!!s3cr3t!!\n-----END PRIVATE KEY-----\n")
    with pytest.raises(
        ConfigurationError, match="tls_client_key_file .*not-a-key.pem: the client key"
    ) as info:
        connection(doris, tls_client_cert_file=doris["client"], tls_client_key_file=str(not_a_key))
    assert "s3cr3t" not in str(info.value)
    with pytest.raises(ConfigurationError, match="mysql_options ssl_cert and ssl_key go together"):
        read(doris, transport="mysql", mysql_options={"ssl_cert": doris["client"]})
    with pytest.raises(ConfigurationError, match="cannot be read: No such file or directory"):
        read(
            doris, transport="mysql", mysql_options={"ssl_cert": doris["client"], "ssl_key": "/nope/key.pem"}
        )
    with pytest.raises(ConfigurationError, match="an encrypted client key is not read"):
        read(doris, transport="mysql", mysql_options={"ssl_key_password": "pw"})
