"""Triton's logging extension over both transports: gRPC LogSettings and HTTP /v2/logging
share one implementation (protocol/log_settings.h), so a change through one is what the
other reads, refusals are the same, and the admin guard's logging category covers both.

Every test puts the log level back at its default (the servers are shared)."""

import json
import re
import tempfile

import grpc
import pytest

from infera_server import InferaServer
from test_grpc import channel_to, expect_error, pb, pb_grpc

DEFAULTS = {"log_file": "", "log_info": True, "log_warning": True, "log_error": True,
            "log_verbose_level": 0, "log_format": "default"}


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-logset-") as repo:
        s = InferaServer(repo, "--allow-admin-api", "logging")  # closed by default
        s.wait_ready()
        yield s
        s.stop()


@pytest.fixture(scope="module")
def stub(server):
    with channel_to(server) as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def as_dict(response):
    out = {}
    for key, value in response.settings.items():
        kind = value.WhichOneof("parameter_choice")
        out[key] = getattr(value, kind) if kind else None
    return out


def request(**settings):
    message = pb.LogSettingsRequest()
    for key, value in settings.items():
        if isinstance(value, bool):
            message.settings[key].bool_param = value
        elif isinstance(value, int):
            message.settings[key].uint32_param = value
        elif isinstance(value, str):
            message.settings[key].string_param = value
        else:
            message.settings[key].SetInParent()  # a value with no parameter set
    return message


def http_settings(server, body=None, headers=None):
    status, _, text = server.request("POST" if body is not None else "GET", "/v2/logging",
                                     None if body is None else json.dumps(body), headers)
    return status, json.loads(text)


def restore(server):
    status, body = http_settings(server, {"log_verbose_level": 0, "log_info": True, "log_warning": True,
                                          "log_error": True, "log_format": "text"})
    assert status == 200 and body == DEFAULTS, body


def test_grpc_read_matches_http(server, stub):
    assert as_dict(stub.LogSettings(pb.LogSettingsRequest())) == DEFAULTS
    assert http_settings(server) == (200, DEFAULTS)


def test_grpc_update_is_what_http_reads_and_back(server, stub):
    try:
        changed = as_dict(stub.LogSettings(request(log_verbose_level=1, log_format="json")))
        expected = {**DEFAULTS, "log_verbose_level": 1, "log_format": "json"}
        assert changed == expected
        assert http_settings(server) == (200, expected)

        status, body = http_settings(server, {"log_verbose_level": 0, "log_info": False, "log_format": "text"})
        expected = {**DEFAULTS, "log_info": False}
        assert status == 200 and body == expected
        assert as_dict(stub.LogSettings(pb.LogSettingsRequest())) == expected

        assert as_dict(stub.LogSettings(request(log_info=True, log_error=True, log_file=""))) == DEFAULTS
    finally:
        restore(server)


@pytest.mark.parametrize("settings, needle", [
    ({"log_colour": True}, "unknown logging setting 'log_colour'"),
    ({"log_info": "yes"}, "log_info must be true or false"),
    ({"log_warning": 3}, "log_warning must be true or false"),
    ({"log_verbose_level": True}, "log_verbose_level must be an integer"),
    ({"log_verbose_level": None}, "log_verbose_level must be an integer"),
    ({"log_format": "xml"}, "log_format must be 'default'"),
    ({"log_format": "iso8601"}, "log_format must be 'default'"),
    ({"log_file": "/tmp/infera.log"}, "infera logs to stderr"),
    # Triton's texts, gRPC's and HTTP's (its qa logging_endpoint_test matches each).
    ({"log_file": "log_file.log"}, "log file location can not be updated through network protocol"),
    ({"log_file": "log_file.log"}, "updating log file was deprecated and no longer supported"),
    ({"log_verbose_level": 1, "log_format": "json", "log_error": False, "log_info": 1}, "log_info must be true"),
    ({"x" * 100000: True}, "unknown logging setting"),
])
def test_hostile_updates_are_invalid_argument_and_change_nothing(server, stub, settings, needle):
    try:
        expect_error(lambda: stub.LogSettings(request(**settings)), grpc.StatusCode.INVALID_ARGUMENT, needle)
        if all(v is not None for v in settings.values()):
            status, body = http_settings(server, settings)
            assert status == 400 and needle in body["error"], (status, body)
        assert as_dict(stub.LogSettings(pb.LogSettingsRequest())) == DEFAULTS  # nothing half-applied
        server.assert_serving()
    finally:
        restore(server)


def test_tritons_independent_switches_and_iso8601(server, stub):
    """Triton's logging_endpoint_test updates: log_error off, info and warning switched
    independently, ISO8601 read back, and the lines really follow."""
    try:
        changed = as_dict(stub.LogSettings(request(log_error=False, log_warning=False, log_info=True,
                                                   log_format="ISO8601", log_verbose_level=2)))
        assert changed == {**DEFAULTS, "log_error": False, "log_warning": False,
                           "log_format": "ISO8601", "log_verbose_level": 2}
        assert http_settings(server) == (200, changed)
        # The change's own INFO line is written before the answer, in the new format:
        # "YYYY-MM-DDThh:mm:ssZ I file:line] log settings changed"
        text = server.log()
        assert re.search(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z I \S+:\d+\] log settings changed$", text,
                         re.M), text[-2000:]
        status, body = http_settings(server, {"log_info": False, "log_warning": True, "log_error": True,
                                              "log_verbose_level": 0, "log_format": "default"})
        assert status == 200 and body == {**DEFAULTS, "log_info": False}
    finally:
        restore(server)


def test_admin_guard_covers_grpc_like_http():
    with tempfile.TemporaryDirectory(prefix="infera-logset-guard-") as repo:
        s = InferaServer(repo, "--admin-token", "tok",
                         "--grpc-restricted-protocol", "logging:admin-key=k2")
        try:
            s.wait_ready()
            auth = [("authorization", "Bearer tok")]
            key = [("triton-grpc-protocol-admin-key", "k2")]
            with channel_to(s) as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)
                for message in (pb.LogSettingsRequest(), request(log_verbose_level=1)):
                    expect_error(lambda: stub.LogSettings(message, metadata=auth),
                                 grpc.StatusCode.PERMISSION_DENIED, "triton-grpc-protocol-admin-key")
                    expect_error(lambda: stub.LogSettings(message, metadata=key),
                                 grpc.StatusCode.UNAUTHENTICATED, "admin token")
                    expect_error(lambda: stub.LogSettings(
                        message, metadata=key + [("authorization", "Bearer tok2")]),
                        grpc.StatusCode.UNAUTHENTICATED, "admin token")
                assert as_dict(stub.LogSettings(pb.LogSettingsRequest(), metadata=auth + key)) == DEFAULTS
                assert as_dict(stub.LogSettings(request(log_verbose_level=1), metadata=auth + key)) == \
                    {**DEFAULTS, "log_verbose_level": 1}
                status, body = http_settings(s, None, {"Authorization": "Bearer tok"})
                assert status == 200 and body["log_verbose_level"] == 1
                assert http_settings(s)[0] == 401
                assert as_dict(stub.LogSettings(request(log_verbose_level=0), metadata=auth + key)) == DEFAULTS
        finally:
            s.stop()
