"""HTTPS end to end: the emulator serves its FE and BE HTTP faces over TLS with a
certificate from a test CA made at start (--tls-dir); writes (Stream Load through the
FE's redirect to the BE, two-phase commit) and split reads (`_query_plan`) verify it with
`tls_ca_file`, and refuse an unknown CA; the MySQL face offers TLS too (SSLRequest), verified
with `ssl_mode="verify_identity"`."""

import os
import tempfile

import daft
import pymysql
import pytest
from conftest import run_emulator
from daft.exceptions import DaftCoreException
from daft_doris import DaftOlapError, DorisConnection, DorisTable, TransportError, read_doris, write_doris

INIT = """
CREATE DATABASE s;
CREATE TABLE s.t (`id` INT NOT NULL, `v` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 4;
"""


@pytest.fixture(scope="module")
def doris():
    with tempfile.TemporaryDirectory() as tls_dir:
        with run_emulator(INIT, extra_args=("--tls-dir", tls_dir)) as ports:
            yield {
                **ports,
                "ca": os.path.join(tls_dir, "ca.pem"),
                "other_ca": os.path.join(tls_dir, "other-ca.pem"),
            }


def conn(ports, ca):
    return DorisConnection(
        host="127.0.0.1",
        http_port=ports["fe_http_port"],
        mysql_port=ports["query_port"],
        http_secure=True,
        tls_ca_file=ca,
    )


def count(ports):
    c = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="s")
    with c, c.cursor() as cur:
        cur.execute("SELECT count(*) FROM t")
        return cur.fetchone()[0]


def test_writes_and_split_reads_verify_the_servers_certificate(doris):
    data = daft.from_pydict({"id": list(range(40)), "v": [f"v{i}" for i in range(40)]})
    write_doris(data, connection=conn(doris, doris["ca"]), table=DorisTable("s", "t"), batch_rows=10)
    write_doris(
        daft.from_pydict({"id": [100], "v": ["x"]}),
        connection=conn(doris, doris["ca"]),
        table=DorisTable("s", "t"),
        two_phase_commit=True,
    )
    assert count(doris) == 41
    back = read_doris(
        host="127.0.0.1",
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        http_secure=True,
        tls_ca_file=doris["ca"],
        database="s",
        table="t",
        transport="mysql",
        split="auto",
        discovery_policy="error",
    ).to_pydict()
    assert sorted(back["id"]) == [*range(40), 100]


@pytest.mark.parametrize("which", ["none", "other_ca"])
def test_a_certificate_the_client_cannot_verify_stops_the_write_before_any_row(doris, which):
    before = count(doris)
    ca = None if which == "none" else doris["other_ca"]
    with pytest.raises(DaftOlapError):
        write_doris(
            daft.from_pydict({"id": [7], "v": ["y"]}),
            connection=conn(doris, ca),
            table=DorisTable("s", "t"),
            max_retries=0,
        )
    assert count(doris) == before
    with pytest.raises(DaftOlapError):
        read_doris(
            host="127.0.0.1",
            mysql_port=doris["query_port"],
            http_port=doris["fe_http_port"],
            http_secure=True,
            tls_ca_file=ca,
            database="s",
            table="t",
            transport="mysql",
            split="auto",
            discovery_policy="error",
        ).collect()


def test_an_unreadable_ca_file_is_a_configuration_error(doris, tmp_path):
    """The CA file is read where the connection is made (natively, capped at 1 MiB): each
    way it can be unusable is a ConfigurationError naming the argument and the reason."""
    from daft_doris import ConfigurationError

    not_pem = tmp_path / "not.pem"
    not_pem.write_text("just text, no certificate\n")
    huge = tmp_path / "huge.pem"
    huge.write_bytes(b"-----BEGIN CERTIFICATE-----\n" + b"A" * (1 << 20))
    for path, rule in [
        (tmp_path / "missing.pem", "cannot be read: No such file or directory"),
        (tmp_path, "cannot be read: Is a directory"),
        (not_pem, "holds no PEM certificate"),
        (huge, "is larger than 1048576 bytes"),
    ]:
        with pytest.raises(ConfigurationError, match=f"tls_ca_file .*{rule}"):
            write_doris(
                daft.from_pydict({"id": [8], "v": ["z"]}),
                connection=conn(doris, str(path)),
                table=DorisTable("s", "t"),
            )


def mysql_read(ports):
    """`read_doris` arguments for a MySQL read of `s.t` (the TLS settings left to the test)."""
    return dict(
        host="127.0.0.1",
        mysql_port=ports["query_port"],
        http_port=ports["fe_http_port"],
        database="s",
        table="t",
        transport="mysql",
    )


def test_the_mysql_link_verifies_the_certificate_when_asked(doris):
    kwargs = mysql_read(doris)
    ids = read_doris(
        **kwargs, mysql_options={"ssl_mode": "verify_identity", "ssl_ca": doris["ca"]}
    ).to_pydict()
    assert len(ids["id"]) >= 41
    with pytest.raises(DaftOlapError):
        read_doris(
            **kwargs, mysql_options={"ssl_mode": "verify_identity", "ssl_ca": doris["other_ca"]}
        ).collect()
    # Writes check the table over the MySQL link: verified with the same CA file.
    connection = DorisConnection(
        host="127.0.0.1",
        http_port=doris["fe_http_port"],
        mysql_port=doris["query_port"],
        http_secure=True,
        tls_ca_file=doris["ca"],
        mysql_ssl_mode="verify_identity",
    )
    write_doris(
        daft.from_pydict({"id": [200], "v": ["m"]}), connection=connection, table=DorisTable("s", "t")
    )
    from daft_doris import ConfigurationError

    with pytest.raises(ConfigurationError, match="init_command"):
        read_doris(**kwargs, mysql_options={"init_command": "SET x = 1"})
    with pytest.raises(ConfigurationError, match="ssl_mode"):
        read_doris(**kwargs, mysql_options={"ssl_mode": "sometimes"})


def test_pymysql_tls_keywords_from_1_1_code_verify_as_pymysql_would(doris):
    """Code written for 1.1 passes PyMySQL's own TLS keywords: `ssl={"ca": ...}` verifies the
    certificate and the host name, `ssl_verify_cert` the chain; the wrong CA fails the read
    (doris_read::options maps them: crates/doris-read/src/options/mysql.rs)."""
    kwargs = mysql_read(doris)
    expected = count(doris)
    for options in (
        {"ssl": {"ca": doris["ca"]}},
        {"ssl": {"ca": doris["ca"], "check_hostname": False}},
        {"ssl_ca": doris["ca"], "ssl_verify_cert": True},
        {"ssl_ca": doris["ca"], "ssl_verify_cert": True, "ssl_verify_identity": True},
    ):
        assert len(read_doris(**kwargs, mysql_options=options).to_pydict()["id"]) == expected, options
    for options in (
        {"ssl": {"ca": doris["other_ca"]}},
        {"ssl_ca": doris["other_ca"], "ssl_verify_cert": True},
    ):
        with pytest.raises(DaftOlapError):
            read_doris(**kwargs, mysql_options=options).collect()
    from daft_doris import ConfigurationError

    # A client certificate without its key is refused by name, the path never echoed
    # (client certificates themselves: test_mtls.py).
    with pytest.raises(ConfigurationError, match="ssl cert and key go together") as info:
        read_doris(**kwargs, mysql_options={"ssl": {"ca": doris["ca"], "cert": "/keys/me.pem"}})
    assert "/keys/me.pem" not in str(info.value)
    # An SSLContext cannot travel to the workers.
    import ssl

    with pytest.raises(ConfigurationError, match="mysql_options ssl must be"):
        read_doris(**kwargs, mysql_options={"ssl": ssl.create_default_context()})


def test_adbc_tls_root_certs_trust_a_private_ca_on_every_flight_link(doris):
    """`adbc.flight.sql.client_option.tls_root_certs` (PEM text, as the ADBC driver takes it)
    verifies the FE and the BE location; without it, or with the wrong CA, the read fails;
    `tls_skip_verify="true"` is refused (verification is always on)."""
    from daft_doris import ConfigurationError

    def read(flight_options):
        # No tls_ca_file: the Flight links trust only what flight_options give them.
        return read_doris(
            host="127.0.0.1",
            mysql_port=doris["query_port"],
            http_port=doris["fe_http_port"],
            flight_port=doris["fe_flight_port"],
            http_secure=True,
            flight_secure=True,
            database="s",
            table="t",
            transport="flight",
            flight_options=flight_options,
        )

    root = "adbc.flight.sql.client_option.tls_root_certs"
    with open(doris["ca"]) as f:
        frame = read({root: f.read(), "adbc.flight.sql.client_option.with_max_msg_size": str(64 << 20)})
    assert len(frame.to_pydict()["id"]) == count(doris)
    with open(doris["other_ca"]) as f:
        other = f.read()
    for options in (None, {root: other}):
        # A task's error reaches the caller through Daft's executor (its text keeps the
        # class); one raised while the source is made keeps its type.
        with pytest.raises((TransportError, DaftCoreException), match="TransportError|transport error"):
            read(options).to_pydict()
    with pytest.raises(ConfigurationError, match="always verified"):
        read({"adbc.flight.sql.client_option.tls_skip_verify": "true"})
    with pytest.raises(ConfigurationError, match="must hold PEM certificates"):
        read({root: "not a certificate"})


@pytest.mark.parametrize("trust", ["ca", "other_ca", "plain"])
def test_flight_reads_verify_the_fe_and_be_certificates(doris, trust):
    """grpc+tls to the FE and to the BE location it names, verified with tls_ca_file (the
    location itself is checked against the BEs listed by /api/backends, over HTTPS)."""
    frame = read_doris(
        host="127.0.0.1",
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        flight_port=doris["fe_flight_port"],
        http_secure=True,
        flight_secure=trust != "plain",
        tls_ca_file=doris["ca"] if trust == "plain" else doris[trust],
        mysql_options={"ssl_mode": "verify_identity"} if trust == "ca" else None,
        database="s",
        table="t",
        transport="flight",
    )
    if trust == "ca":
        assert len(frame.to_pydict()["id"]) == count(doris)
    else:
        # A task's error reaches the caller through Daft's executor (its text keeps the
        # class); one raised while the source is made keeps its type.
        with pytest.raises((TransportError, DaftCoreException), match="TransportError|transport error"):
            frame.to_pydict()


def test_a_catalog_read_keeps_the_connections_tls_mode(doris):
    """A read through DorisCatalog (and so daft.sql) uses the whole connection: with
    `mysql_ssl_mode="verify_identity"` and a CA that did not sign the server's certificate
    the read fails; it is not made with the default `preferred`, which would not verify."""
    import daft
    from daft_doris import DorisCatalog

    def catalog(ca):
        connection = DorisConnection(
            host="127.0.0.1",
            http_port=doris["fe_http_port"],
            mysql_port=doris["query_port"],
            http_secure=True,
            tls_ca_file=ca,
            mysql_ssl_mode="verify_identity",
            request_timeout_seconds=20.0,
        )
        return DorisCatalog(connection, name="doris", transport="mysql")

    table = catalog(doris["ca"]).get_table("s.t")
    assert table.read().count_rows() == count(doris)
    session = daft.Session()
    session.attach(catalog(doris["ca"]), alias="doris")
    assert session.sql("SELECT id FROM doris.s.t").count_rows() == count(doris)
    # The table object made without any I/O: only its read talks to the server, and it
    # verifies (the catalog's own metadata calls would fail first otherwise).
    from daft_doris.catalog import DorisCatalogTable

    unverifiable = DorisCatalogTable(catalog(doris["other_ca"]), "s", "t")
    with pytest.raises(DaftOlapError):
        unverifiable.read().collect()


def test_mysql_options_never_lower_a_catalogs_tls_mode(doris):
    """A catalog read's `mysql_options` may raise the connection's MySQL TLS mode, never
    lower it (doris_read::options::MySqlOptions::at_least): `ssl_ca` alone, PyMySQL's
    `required`, still verifies the name under a `verify_identity` connection, so another
    CA fails the read; `ssl_disabled` and `ssl_mode="disabled"` are refused."""
    from daft_doris import ConfigurationError, DorisCatalog

    connection = DorisConnection(
        host="127.0.0.1",
        http_port=doris["fe_http_port"],
        mysql_port=doris["query_port"],
        http_secure=True,
        tls_ca_file=doris["ca"],
        mysql_ssl_mode="verify_identity",
    )
    table = DorisCatalog(connection, name="doris", transport="mysql").get_table("s.t")
    assert table.read(mysql_options={"ssl_ca": doris["ca"]}).count_rows() == count(doris)
    with pytest.raises(DaftOlapError):
        table.read(mysql_options={"ssl_ca": doris["other_ca"]}).collect()
    lowered = r"cannot lower the connection's TLS mode \(verify_identity\)"
    for lowering in ({"ssl_disabled": True}, {"ssl_mode": "disabled"}):
        with pytest.raises(ConfigurationError, match=lowered):
            table.read(mysql_options=lowering)


def test_a_ca_given_for_the_mysql_link_is_trusted_on_that_link_alone(doris):
    """`mysql_options["ssl_ca"]` verifies the MySQL link (as PyMySQL's does); the HTTPS
    `_query_plan` of a split read does not trust it: without `tls_ca_file` the plan fails on
    the server's certificate (`discovery_policy="error"`: no fallback to one task), with it
    the read runs."""
    kwargs = dict(
        mysql_read(doris),
        http_secure=True,
        split="auto",
        discovery_policy="error",
        mysql_options={"ssl_mode": "verify_identity", "ssl_ca": doris["ca"]},
    )
    with pytest.raises(DaftOlapError, match="tablet planning failed: planning request failed"):
        read_doris(**kwargs).collect()
    assert len(read_doris(**kwargs, tls_ca_file=doris["ca"]).to_pydict()["id"]) == count(doris)
