"""read_doris's options checked before any I/O: each bad one refused by name (never its
value), keywords checked as Python checks them, and the native request they make pickled
as its arguments. Nothing here needs a server: port 1 on loopback refuses any connection."""

import pickle

import daft_doris
import pytest
from daft_doris import ConfigurationError, read_doris


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"transport": "jdbc"}, "transport"),
        ({"split": "many"}, "split"),
        ({"mysql_port": 0}, "mysql_port"),
        ({"batch_rows": 0}, "batch_rows"),
        ({"target_tasks": 9, "max_tasks": 8}, "target_tasks"),
        ({"connect_timeout_seconds": float("nan")}, "connect_timeout_seconds"),
        ({"columns": "id"}, "columns"),
        ({"columns": ["id", "id"]}, "repeat"),
        ({"query_parameters": {"a": 1}}, "unsafe_where_sql"),
        ({"mysql_options": {"password": "x"}}, "password"),
        # A PyMySQL setting the connection's own arguments say: the message names which.
        ({"mysql_options": {"port": 5}}, r"port \(use mysql_port\)"),
        # 1.1's PyMySQL timeouts are honoured, but not beside the argument they map onto.
        (
            {"mysql_options": {"read_timeout": 5}, "query_timeout_seconds": 5},
            "query_timeout_seconds and its mysql_options key are both given",
        ),
        ({"mysql_options": {"autocommit": False}}, "autocommit=False is refused"),
        ({"mysql_options": {"user": "u"}}, r"user \(use username\)"),
        ({"password": 12}, "password"),
        (
            {"transport": "flight", "flight_options": {"adbc.flight.sql.rpc.timeout_seconds.query": "1"}},
            r"timeout_seconds.query \(use query_timeout_seconds\)",
        ),
        ({"transport": "flight", "flight_port": 70000}, "flight_port"),
        ({"database": ""}, "database"),
        # The names are the crates' (`DiscoveryPolicy`, `SplitKind`, `TransportKind`): the
        # refusal lists them and never echoes the value.
        ({"discovery_policy": "maybe"}, "discovery_policy must be one of 'single', 'error'"),
        ({"split": "off"}, "split must be one of 'single', 'auto'"),
        ({"split": 2}, "split must be one of"),
        ({"transport": "adbc"}, "transport must be one of 'mysql', 'flight'"),
        ({"target_tasks": True}, "target_tasks must be an integer"),
        ({"planning_timeout_seconds": 0}, "planning_timeout_seconds"),
        ({"planning_timeout_seconds": "10"}, "planning_timeout_seconds must be a number"),
        ({"unsafe_where_sql": "   "}, "non-blank"),
        ({"unsafe_where_sql": "id = :p", "query_parameters": {"q": "pw-9Zq"}}, "p"),
        ({"batch_bytes": True}, "batch_bytes must be an integer from 1"),
        ({"queries_per_task": 0}, "queries_per_task must be an integer from 1"),
        ({"mysql_options": {"init_command": "SET x = 1"}}, "init_command is refused"),
        ({"mysql_options": {"charset": "latin1"}}, "charset is fixed to utf8mb4"),
        ({"mysql_options": {"ssl_mode": "sometimes"}}, "ssl_mode must be one of"),
        ({"mysql_options": {"compress": True}}, "compress is refused: Doris's MySQL protocol"),
        ({"mysql_options": {"frobnicate": 1}}, "frobnicate are not supported"),
        ({"mysql_options": {"ssl_disabled": True, "ssl_ca": "/ca.pem"}}, "contradicts"),
        (
            {"transport": "flight", "flight_options": {"adbc.flight.sql.rpc.call_header.x": "pw-9Zq"}},
            "no call headers",
        ),
        ({"mysql_options": "ssl_mode=required"}, "mysql_options must be a mapping"),
        ({"mysql_options": {"ssl_ca": ""}}, "ssl_ca must be the path of a PEM file"),
        (
            {"transport": "flight", "flight_options": {"max_parallel_endpoints": "0"}},
            "max_parallel_endpoints",
        ),
        ({"transport": "flight", "flight_options": {"max_parallel_endpoints": 4}}, "must be a string"),
        ({"transport": "flight", "flight_allowed_locations": "h:1"}, "a list of host:port"),
        ({"transport": "flight", "flight_allowed_locations": ["h:0"]}, "entries must be host:port"),
        ({"transport": "flight", "flight_endpoint_rewrite": {"a:1": 2}}, "must be a string"),
    ],
)
def test_bad_options_fail_before_any_network_io(kwargs, message):
    # Port 1 on loopback: any connection attempt would fail with a transport error.
    args = {
        "host": "127.0.0.1",
        "database": "py",
        "table": "t",
        "transport": "mysql",
        "mysql_port": 1,
        **kwargs,
    }
    with pytest.raises(ConfigurationError, match=message) as raised:
        read_doris(**args)
    assert "pw-9Zq" not in str(raised.value)


def test_options_are_keywords_checked_as_python_checks_them():
    # `**options: Unpack[DorisReadOptions]`: a misspelt or missing option is refused as a
    # bad keyword would be, before anything else.
    base = {"host": "127.0.0.1", "database": "py", "table": "t", "transport": "mysql", "mysql_port": 1}
    with pytest.raises(TypeError, match="unexpected keyword argument 'batch_row'"):
        read_doris(**base, batch_row=10)
    with pytest.raises(TypeError, match="missing required keyword arguments: 'table', 'transport'"):
        read_doris(host="127.0.0.1", database="py")
    with pytest.raises(TypeError, match="DorisDataSource.. got an unexpected keyword argument 'colums'"):
        daft_doris.DorisDataSource(**base, colums=["id"])


def test_the_native_read_request_pickles_as_its_arguments():
    from daft_doris import _native

    options = {
        "transport": "flight",
        "split": "auto",
        "discovery_policy": "error",
        "target_tasks": 3,
        "max_tasks": 8,
        "planning_timeout_seconds": 2.5,
        "unsafe_where_sql": "id = :p",
        "mysql_options": {"read_timeout": 5},
    }
    request = _native.ReadRequest("py", "t", {"p": {"type": "int64", "value": 7}}, **options)
    copy = pickle.loads(pickle.dumps(request))
    assert (
        repr(copy) == repr(request) == "ReadRequest(table=py.t, transport=flight, split=auto, target_tasks=3)"
    )
    assert copy.__getnewargs_ex__() == request.__getnewargs_ex__()
    # Defaults live in Rust: None is the default.
    default = _native.ReadRequest("py", "t", transport="mysql", split=None)
    assert repr(default) == "ReadRequest(table=py.t, transport=mysql, split=single, target_tasks=8)"
    with pytest.raises(ConfigurationError, match="target_tasks must not exceed max_tasks"):
        _native.ReadRequest("py", "t", transport="mysql", target_tasks=300)
    with pytest.raises(ConfigurationError, match="invalid query_parameters"):
        _native.ReadRequest("py", "t", {"p": {"type": "nope"}}, transport="mysql", unsafe_where_sql="id = :p")
    with pytest.raises(ConfigurationError, match="transport must be one of"):
        _native.ReadRequest("py", "t")
