"""The audit log (issue 29, docs/security.md "Audit log") over real sockets.

Every admin action (load, unload, shared-memory register / unregister, logging and trace
settings changes) and every refused admin access, over HTTP and gRPC, leaves one JSON line
in --audit-log-file: time, credential (never the secret), peer, transport, action, target
and outcome. A hostile region name cannot break a line; the file is created 0600. Without
the flag the lines go to the server log.
"""

import json
import os
import re
import stat
import tempfile
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model

TOKEN = "s3cret-audit-token"
WRONG = "not-the-token"
IDENTITY = """name: "identity_fp32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
PEER = re.compile(r"^127\.0\.0\.1:\d+$")
FIELDS = ["time", "audit", "credential", "peer", "transport", "action", "target", "outcome"]


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-audit-") as path:
        write_model(path, "identity_fp32", IDENTITY)
        yield path


@pytest.fixture
def region():
    mem = shared_memory.SharedMemory(create=True, size=64)
    yield "/" + mem.name
    mem.close()
    mem.unlink()


class AuditFile:
    """Reads the lines the server appended since the last call, each checked and parsed."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def new_lines(self):
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        assert data == b"" or data.endswith(b"\n"), data
        lines = []
        for raw in data.decode("utf-8").splitlines():
            line = json.loads(raw)
            assert list(line) == FIELDS, raw
            assert TIME.match(line["time"]), raw
            assert line["audit"] == "admin"
            assert PEER.match(line["peer"]), raw
            lines.append(line)
        return lines


def summary(lines):
    return [(l["transport"], l["credential"], l["action"], l["target"], l["outcome"]) for l in lines]


def test_http_and_grpc_admin_actions_and_refusals_are_audited(repo, region, tmp_path):
    path = str(tmp_path / "audit.log")
    server = InferaServer(repo, "--model-control-mode", "explicit", "--admin-token", TOKEN,
                          "--audit-log-file", path)
    try:
        server.wait_ready()
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        audit = AuditFile(path)
        assert audit.new_lines() == []
        auth = {"Authorization": f"Bearer {TOKEN}"}

        # HTTP, on one connection whose local port the peer field must name.
        conn = server.connection()
        conn.connect()
        client_port = conn.sock.getsockname()[1]

        def post(path_, body=None, headers=auth):
            conn.request("POST", path_, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()

        assert post("/v2/repository/models/identity_fp32/load")[0] == 200
        assert post("/v2/repository/models/identity_fp32/unload")[0] == 200
        assert post("/v2/repository/models/no_such_model/load")[0] >= 400
        assert post("/v2/systemsharedmemory/region/r1/register",
                    json.dumps({"key": region, "byte_size": 64}))[0] == 200
        assert post("/v2/systemsharedmemory/region/r1/unregister")[0] == 200
        assert post("/v2/logging", json.dumps({"log_verbose_level": 0}))[0] == 200
        trace_status, trace_body = post("/v2/trace/setting", json.dumps({"log_frequency": "0"}))
        assert post("/v2/repository/models/identity_fp32/load",
                    headers={"Authorization": f"Bearer {WRONG}"})[0] == 401
        assert post("/v2/logging", json.dumps({"log_verbose_level": 1}), headers={})[0] == 401
        # A hostile region name (quote, newline, a forged field) stays inside its field.
        hostile = 'evil"}\n{"outcome":"ok'
        status, _ = post("/v2/systemsharedmemory/region/" +
                         "evil%22%7D%0A%7B%22outcome%22%3A%22ok/register",
                         json.dumps({"key": "/no-such-shm-object", "byte_size": 8}))
        assert status >= 400
        conn.close()

        lines = audit.new_lines()
        assert all(l["peer"] == f"127.0.0.1:{client_port}" for l in lines), lines
        trace_outcome = "ok" if trace_status == 200 else "error: " + json.loads(trace_body)["error"]
        got = summary(lines)
        assert got[:2] == [
            ("http", "admin-token", "model.load", "identity_fp32", "ok"),
            ("http", "admin-token", "model.unload", "identity_fp32", "ok"),
        ], got
        assert got[2][:4] == ("http", "admin-token", "model.load", "no_such_model")
        assert got[2][4].startswith("error: "), got[2]
        assert got[3:9] == [
            ("http", "admin-token", "shm.system.register", "r1", "ok"),
            ("http", "admin-token", "shm.system.unregister", "r1", "ok"),
            ("http", "admin-token", "logging.update", "server", "ok"),
            ("http", "admin-token", "trace.update", "server", trace_outcome),
            ("http", "admin-token", "model.load", "identity_fp32", "denied"),
            ("http", "none", "logging.update", "server", "denied"),
        ], got
        assert got[9][:4] == ("http", "admin-token", "shm.system.register", hostile)
        assert got[9][4].startswith("error: "), got[9]
        assert len(got) == 10, got

        # gRPC: the same actions, credential from the metadata, peer from the call.
        metadata = (("authorization", f"Bearer {TOKEN}"),)
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="identity_fp32"), metadata=metadata)
            stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="identity_fp32"),
                                       metadata=metadata)
            stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="g1", key=region, byte_size=64), metadata=metadata)
            stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="g1"),
                                              metadata=metadata)
            log_update = pb.LogSettingsRequest()
            log_update.settings["log_verbose_level"].uint32_param = 0
            stub.LogSettings(log_update, metadata=metadata)
            trace_update = pb.TraceSettingRequest()
            trace_update.settings["log_frequency"].value.append("0")
            try:
                stub.TraceSetting(trace_update, metadata=metadata)
                grpc_trace_outcome = "ok"
            except grpc.RpcError as err:
                grpc_trace_outcome = "error: " + err.details()
            with pytest.raises(grpc.RpcError) as refused:
                stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="identity_fp32"),
                                           metadata=(("authorization", f"Bearer {WRONG}"),))
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError) as refused_read:
                stub.LogSettings(pb.LogSettingsRequest())
            assert refused_read.value.code() == grpc.StatusCode.UNAUTHENTICATED

        assert summary(audit.new_lines()) == [
            ("grpc", "admin-token", "model.load", "identity_fp32", "ok"),
            ("grpc", "admin-token", "model.unload", "identity_fp32", "ok"),
            ("grpc", "admin-token", "shm.system.register", "g1", "ok"),
            ("grpc", "admin-token", "shm.system.unregister", "g1", "ok"),
            ("grpc", "admin-token", "logging.update", "server", "ok"),
            ("grpc", "admin-token", "trace.update", "server", grpc_trace_outcome),
            ("grpc", "admin-token", "model.unload", "identity_fp32", "denied"),
            ("grpc", "none", "logging.read", "server", "denied"),
        ]
        # Reads that pass are not audited.
        assert server.request("GET", "/v2/trace/setting")[0] == 200
        assert server.request("GET", "/v2/systemsharedmemory/status")[0] == 200
        assert audit.new_lines() == []
        server.assert_serving()
        assert TOKEN not in server.log()
    finally:
        server.stop()
    with open(path, "rb") as f:
        contents = f.read()
    assert TOKEN.encode() not in contents and WRONG.encode() not in contents


def test_without_the_flag_lines_go_to_the_server_log(repo):
    server = InferaServer(repo, "--http-restricted-api", "logging:x-admin-key=k3y", "--log-format", "json")
    try:
        server.wait_ready()
        assert server.request("POST", "/v2/logging", json.dumps({"log_verbose_level": 0}),
                              headers={"x-admin-key": "k3y"})[0] == 200
        assert server.request("GET", "/v2/logging", headers={"x-admin-key": "wrong"})[0] == 403
        server.assert_serving()
        log = server.log()
    finally:
        server.stop()
    audit = [json.loads(line) for line in log.splitlines() if '"audit":"admin"' in line]
    assert [(l["credential"], l["action"], l["outcome"]) for l in audit] == [
        ("restricted:logging", "logging.update", "ok"),
        ("restricted:logging", "logging.read", "denied"),
    ], log
    assert all(PEER.match(l["peer"]) and l["transport"] == "http" for l in audit), log
