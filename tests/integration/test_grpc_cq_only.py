"""Every gRPC method on the completion-queue threads, none on gRPC's callback API
(docs/grpc.md, "No callback API"), black box over real sockets.

What changed: the 17 control-plane RPCs and grpc.health.v1.Health moved from the
callback API to the --grpc-infer-threads completion queues. On the wire nothing changes;
what is visible is the process: gRPC starts no callback-API threads ("nexting_thread")
and no sync-server threads, however many control-plane calls run beside inference. The
answers (auth metadata, codes, messages, Health/Watch UNIMPLEMENTED, load / unload
finished from the admin worker) are checked here under concurrency, on every queue.
"""

import tempfile
import threading

import grpc
import pytest

from grpc_stubs import health_pb2, health_pb2_grpc, pb, pb_grpc
from infera_server import InferaServer, SIMPLE_CONFIG, thread_names, write_model

THREADS = 3
TOKEN = [("authorization", "Bearer tok")]
# gRPC 1.51's callback-API polling threads and its sync-server threads, by /proc name.
FORBIDDEN_THREAD_PREFIXES = ("nexting_thread", "grpcpp_sync_ser")


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-grpc-cq-") as path:
        write_model(path, "simple", SIMPLE_CONFIG)
        write_model(path, "other", SIMPLE_CONFIG.replace('name: "simple"', 'name: "other"'))
        s = InferaServer(path, "--grpc-infer-threads", str(THREADS), "--model-control-mode", "explicit",
                         "--load-model", "simple", "--admin-token", "tok")
        s.wait_ready()
        yield s
        s.stop()


def simple_request(rid):
    request = pb.ModelInferRequest(model_name="simple", id=rid)
    for name in ("INPUT0", "INPUT1"):
        request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        request.raw_input_contents.append(bytes(range(16)) * 4)
    return request


def every_control_rpc(stub, health):
    """One call of each control-plane RPC and of Health; asserts each answer."""
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert stub.ServerReady(pb.ServerReadyRequest()).ready
    assert stub.ModelReady(pb.ModelReadyRequest(name="simple")).ready
    assert not stub.ModelReady(pb.ModelReadyRequest(name="nope")).ready
    assert stub.ServerMetadata(pb.ServerMetadataRequest()).name == "infera"
    assert stub.ModelMetadata(pb.ModelMetadataRequest(name="simple")).name == "simple"
    assert stub.ModelConfig(pb.ModelConfigRequest(name="simple")).config.name == "simple"
    assert stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple")).model_stats[0].name == "simple"
    index = stub.RepositoryIndex(pb.RepositoryIndexRequest())
    assert {m.name for m in index.models} == {"simple", "other"}
    assert stub.TraceSetting(pb.TraceSettingRequest()).settings
    assert stub.LogSettings(pb.LogSettingsRequest(), metadata=TOKEN).settings
    stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest())
    stub.CudaSharedMemoryStatus(pb.CudaSharedMemoryStatusRequest())
    serving = health_pb2.HealthCheckResponse.SERVING
    assert health.Check(health_pb2.HealthCheckRequest()).status == serving
    answer = stub.ModelInfer(simple_request("c"))
    assert len(answer.raw_output_contents) == 2


def test_every_rpc_is_served_concurrently_and_no_callback_threads_run(server):
    errors = []

    def client(k):
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}", options=[("infera.test.client", k)]) as ch:
                stub = pb_grpc.GRPCInferenceServiceStub(ch)
                health = health_pb2_grpc.HealthStub(ch)
                for _ in range(10):
                    every_control_rpc(stub, health)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    clients = [threading.Thread(target=client, args=(k,)) for k in range(6)]
    for t in clients:
        t.start()
    # Census while the calls run, then again once they are done.
    during = thread_names(server.process.pid)
    for t in clients:
        t.join(timeout=120)
        assert not t.is_alive()
    assert errors == []
    after = thread_names(server.process.pid)
    for names in (during, after):
        assert [n for n in names if n.startswith(FORBIDDEN_THREAD_PREFIXES)] == []
        assert sorted(n for n in names if n.startswith("grpc-infer-")) == [f"grpc-infer-{i}" for i in range(THREADS)]


def test_load_and_unload_finish_from_the_admin_worker_with_auth_checked(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        stub = pb_grpc.GRPCInferenceServiceStub(ch)
        with pytest.raises(grpc.RpcError) as denied:
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="other"))
        assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as wrong:
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="other"),
                                     metadata=[("authorization", "Bearer nope")])
        assert wrong.value.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        # Loads and unloads of "other" from several clients at once, inference beside them.
        errors = []

        def admin(k):
            try:
                for _ in range(3):
                    stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="other"), metadata=TOKEN)
                    assert len(stub.ModelInfer(simple_request(f"a{k}")).raw_output_contents) == 2
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        admins = [threading.Thread(target=admin, args=(k,)) for k in range(3)]
        for t in admins:
            t.start()
        for t in admins:
            t.join(timeout=120)
            assert not t.is_alive()
        assert errors == []
        assert stub.ModelReady(pb.ModelReadyRequest(name="other")).ready
        stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="other"), metadata=TOKEN)
        assert not stub.ModelReady(pb.ModelReadyRequest(name="other")).ready
        with pytest.raises(grpc.RpcError) as bad_config:
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(
                model_name="other", parameters={"config": pb.ModelRepositoryParameter(bool_param=True)}),
                metadata=TOKEN)
        assert bad_config.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "parameter 'config' must be a string_param" in bad_config.value.details()


def test_health_watch_is_unimplemented_and_unknown_services_not_found(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        health = health_pb2_grpc.HealthStub(ch)
        for _ in range(THREADS * 2):  # each queue's Watch call is re-requested
            with pytest.raises(grpc.RpcError) as watch:
                next(iter(health.Watch(health_pb2.HealthCheckRequest(), timeout=30)))
            assert watch.value.code() == grpc.StatusCode.UNIMPLEMENTED
        with pytest.raises(grpc.RpcError) as unknown:
            health.Check(health_pb2.HealthCheckRequest(service="nope"))
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        assert "unknown service 'nope'" in unknown.value.details()


# Its warmup takes about 1 s, so a load is still running when the server is stopped.
SLOW_LOADING = """
name: "NAME"
backend: "fault_injection"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { count: 1 } ]
parameters { key: "delay_ms" value { string_value: "1000" } }
model_warmup [ { name: "w" batch_size: 1
                 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } } ]
"""


def test_shutdown_answers_loads_in_flight_and_queued_then_exits():
    """SIGTERM while one gRPC load runs on the only admin worker and two wait: the
    running one finishes (OK), the queued ones never start, every call ends (the
    server waits for its calls before it stops its queues) and the process exits 0."""
    with tempfile.TemporaryDirectory(prefix="infera-grpc-cq-stop-") as path:
        for name in ("slow0", "slow1", "slow2"):
            write_model(path, name, SLOW_LOADING.replace("NAME", name))
        s = InferaServer(path, "--model-control-mode", "explicit", "--model-load-thread-count", "1",
                         "--grpc-infer-threads", "2")
        try:
            s.wait_ready()
            with grpc.insecure_channel(f"127.0.0.1:{s.grpc_port}") as ch:
                stub = pb_grpc.GRPCInferenceServiceStub(ch)
                first = stub.RepositoryModelLoad.future(pb.RepositoryModelLoadRequest(model_name="slow0"),
                                                        timeout=120)
                # Wait until slow0 is loading (the worker is busy), then queue two more.
                index = pb.RepositoryIndexRequest()
                for _ in range(6000):
                    states = {m.name: m.state for m in stub.RepositoryIndex(index, timeout=30).models}
                    if states.get("slow0") == "LOADING":
                        break
                    assert not first.done(), first.exception()
                    threading.Event().wait(0.01)
                else:
                    raise AssertionError("slow0 never started loading")
                queued = [stub.RepositoryModelLoad.future(pb.RepositoryModelLoadRequest(model_name=n), timeout=120)
                          for n in ("slow1", "slow2")]
                # They never start. In the executor's queue (or reaching it once it has
                # stopped) they are answered UNAVAILABLE; a call still on its way when
                # gRPC itself shuts down is cancelled by gRPC core (CANCELLED — the
                # callback-API build does the same; nothing observable tells when the
                # calls have reached the queue, so both are accepted).
                s.stop()
                assert first.result() is not None
                for call in queued:
                    assert call.exception() is not None
                    assert call.exception().code() in (grpc.StatusCode.UNAVAILABLE,
                                                       grpc.StatusCode.CANCELLED), call.exception()
        finally:
            if s.process.poll() is None:
                s.process.kill()


def test_unparsable_control_plane_messages_are_refused_and_the_server_goes_on(server):
    """A message that is not the method's request type: gRPC's async API refuses it
    INTERNAL "Unable to parse request" before infera sees it (a deliberate change: the
    callback API answered UNIMPLEMENTED with no message, naming the wrong problem)."""
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        raw = {m: ch.unary_unary(m, request_serializer=lambda x: x, response_deserializer=lambda x: x)
               for m in ("/inference.GRPCInferenceService/ServerLive",
                         "/inference.GRPCInferenceService/ModelMetadata",
                         "/inference.GRPCInferenceService/RepositoryModelLoad",
                         "/grpc.health.v1.Health/Check")}
        for _ in range(THREADS):  # each queue's requested call is replaced
            for method, call in raw.items():
                with pytest.raises(grpc.RpcError) as refused:
                    call(b"\xff\xff\xff\xff", timeout=30)
                assert refused.value.code() == grpc.StatusCode.INTERNAL, method
                assert refused.value.details() == "Unable to parse request", method
        stub = pb_grpc.GRPCInferenceServiceStub(ch)
        for _ in range(THREADS * 2):
            assert stub.ServerLive(pb.ServerLiveRequest(), timeout=30).live
            assert stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"), timeout=30).name == "simple"
        health = health_pb2_grpc.HealthStub(ch)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=30).status == health_pb2.HealthCheckResponse.SERVING
