"""The same hostile requests over HTTP and gRPC get the same class of error (issue 25,
item 4: one inference pipeline, protocol/infer_pipeline.h, decides the order of the checks).

Each case is one transport-neutral request — model, version, inputs (values, raw bytes or a
shared-memory region), requested outputs, parameters — rendered as a KServe JSON body for
`POST /v2/models/{m}[/versions/{v}]/infer` and as a ModelInferRequest for gRPC ModelInfer,
and the expected class: a gRPC code, whose HTTP status is the explicit map below (what
http_status.cc and grpc_status.cc do, written out here so a change on one side fails).
Several cases are wrong in more than one way, to pin which check wins (an unknown model
with a malformed tensor is NOT_FOUND on both).
"""

import json
import struct
import tempfile
from dataclasses import dataclass, field
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, REPEAT_CONFIG, SIMPLE_CONFIG, write_model

# gRPC code name -> HTTP status (the one mapping each transport applies at its edge).
HTTP_STATUS = {
    "OK": 200,
    "INVALID_ARGUMENT": 400,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
    "INTERNAL": 500,
}

IDENTITY = """name: "{name}"
backend: "identity"
max_batch_size: 0
input [ {{ name: "INPUT0" data_type: {dtype} dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: {dtype} dims: [ -1 ] }} ]
"""

REGION = "parity_region"
REGION_BYTES = 256

# The typed-contents field gRPC carries a value of each Python type in (an integer by the
# tensor's datatype), as a client would fill it: a value of the wrong kind lands in a field
# of another datatype, which is the gRPC form of JSON data of the wrong kind.
INTEGER_FIELD = {"UINT8": "uint_contents", "UINT16": "uint_contents", "UINT32": "uint_contents",
                 "INT64": "int64_contents", "UINT64": "uint64_contents"}


def contents_field(datatype, value):
    if isinstance(value, bool):
        return "bool_contents"
    if isinstance(value, str):
        return "bytes_contents"
    if isinstance(value, float):
        return "fp32_contents"
    return INTEGER_FIELD.get(datatype, "int_contents")


@dataclass
class Input:
    name: str
    datatype: str
    shape: list
    values: list = None      # JSON "data" / typed contents
    shm: dict = None         # shared-memory parameters instead of data
    parameters: dict = field(default_factory=dict)


@dataclass
class Case:
    name: str
    expect: str                  # gRPC code name
    model: str = "simple"
    version: str = ""            # "" = the policy's
    inputs: list = None          # None: simple's two good inputs
    outputs: list = field(default_factory=list)  # [(name, parameters)]
    parameters: dict = field(default_factory=dict)
    message: str = ""            # a substring both answers' messages must contain


def good_inputs(rows=1):
    return [Input("INPUT0", "INT32", [rows, 16], list(range(16 * rows))),
            Input("INPUT1", "INT32", [rows, 16], [1] * (16 * rows))]


def with_input(index, **changes):
    inputs = good_inputs()
    for key, value in changes.items():
        setattr(inputs[index], key, value)
    return inputs


def shm_params(region=REGION, byte_size=64, offset=None):
    params = {"shared_memory_region": region, "shared_memory_byte_size": byte_size}
    if offset is not None:
        params["shared_memory_offset"] = offset
    return params


CASES = [
    # --- the model and its version: NotFound first, a malformed version before anything
    Case("unknown model", "NOT_FOUND", model="nope", message="Request for unknown model: 'nope' is not found"),
    Case("unknown model, malformed tensor", "NOT_FOUND", model="nope",
         inputs=with_input(0, values=[1, 2, 3])),
    Case("unknown model, wrong datatype", "NOT_FOUND", model="nope", inputs=with_input(0, datatype="FP32")),
    Case("unknown model and version", "NOT_FOUND", model="nope", version="3"),
    Case("unknown model, unknown shm region", "NOT_FOUND", model="nope",
         inputs=with_input(0, values=None, shm=shm_params(region="missing"))),
    Case("unknown version", "NOT_FOUND", version="9", message="version 9"),
    Case("unknown version, malformed tensor", "INVALID_ARGUMENT", version="9", inputs=with_input(0, values=[1])),
    Case("unknown version, unknown shm region", "INVALID_ARGUMENT", version="9",
         inputs=with_input(0, values=None, shm=shm_params(region="missing"))),
    Case("version zero", "INVALID_ARGUMENT", version="0", message="invalid model version"),
    Case("version not a number", "INVALID_ARGUMENT", version="one", message="invalid model version"),
    Case("negative version", "INVALID_ARGUMENT", version="-1"),
    # --- tensors
    Case("missing input", "INVALID_ARGUMENT", inputs=good_inputs()[:1], message="INPUT1"),
    Case("no inputs", "INVALID_ARGUMENT", inputs=[]),
    Case("unknown input", "INVALID_ARGUMENT", inputs=good_inputs() + [Input("EXTRA", "INT32", [1, 1], [1])],
         message="EXTRA"),
    Case("duplicate input", "INVALID_ARGUMENT", inputs=good_inputs() + good_inputs()[:1],
         message="input 'INPUT0' already exists in request"),
    Case("wrong datatype", "INVALID_ARGUMENT", inputs=with_input(0, datatype="FP32", values=[0.5] * 16),
         message="INPUT0"),
    Case("unknown datatype", "INVALID_ARGUMENT", inputs=with_input(0, datatype="INT33"), message="INT33"),
    Case("wrong shape", "INVALID_ARGUMENT", inputs=with_input(0, shape=[1, 15], values=list(range(15))),
         message="[1,15]"),
    Case("data count does not match the shape", "INVALID_ARGUMENT", inputs=with_input(0, values=list(range(15)))),
    Case("negative dimension", "INVALID_ARGUMENT", inputs=with_input(0, shape=[-1, 16])),
    Case("batch over max_batch_size", "INVALID_ARGUMENT",
         inputs=[Input("INPUT0", "INT32", [9, 16], [0] * 144), Input("INPUT1", "INT32", [9, 16], [0] * 144)]),
    Case("rows differ between inputs", "INVALID_ARGUMENT",
         inputs=[Input("INPUT0", "INT32", [2, 16], [0] * 32), Input("INPUT1", "INT32", [1, 16], [0] * 16)]),
    Case("value out of the datatype's range", "INVALID_ARGUMENT", model="identity_int8",
         inputs=[Input("INPUT0", "INT8", [2], [1, 300])]),
    Case("BYTES input given numbers", "INVALID_ARGUMENT", model="identity_bytes",
         inputs=[Input("INPUT0", "BYTES", [1], [7])]),
    # --- requested outputs and parameters
    Case("unknown output", "INVALID_ARGUMENT", outputs=[("NOPE", {})], message="NOPE"),
    Case("duplicate output", "INVALID_ARGUMENT", outputs=[("OUTPUT0", {}), ("OUTPUT0", {})],
         message="output 'OUTPUT0' already exists in request"),
    Case("unknown output parameter", "INVALID_ARGUMENT", outputs=[("OUTPUT0", {"clasification": 2})],
         message="clasification"),
    Case("classification of zero classes", "INVALID_ARGUMENT", outputs=[("OUTPUT0", {"classification": 0})]),
    Case("classification count not an integer", "INVALID_ARGUMENT", outputs=[("OUTPUT0", {"classification": "x"})]),
    Case("classification of a BYTES output", "INVALID_ARGUMENT", model="identity_bytes",
         inputs=[Input("INPUT0", "BYTES", [1], ["a"])], outputs=[("OUTPUT0", {"classification": 1})]),
    Case("priority outside the levels", "INVALID_ARGUMENT", parameters={"priority": 7}, message="priority"),
    Case("negative timeout", "INVALID_ARGUMENT", parameters={"timeout": -5}, message="timeout"),
    Case("binary_data_output not a boolean", "INVALID_ARGUMENT", parameters={"binary_data_output": "yes"},
         message="binary_data_output"),
    Case("shm byte size not an integer", "INVALID_ARGUMENT",
         inputs=with_input(0, values=None, shm={"shared_memory_region": REGION, "shared_memory_byte_size": "64"})),
    # --- shared memory (a 256-byte region is registered)
    Case("unknown shm region", "INVALID_ARGUMENT", inputs=with_input(0, values=None, shm=shm_params(region="missing")),
         message="Unable to find shared memory region: 'missing'"),
    Case("shm byte size not the input's", "INVALID_ARGUMENT",
         inputs=with_input(0, values=None, shm=shm_params(byte_size=60))),
    Case("shm offset past the region", "INVALID_ARGUMENT",
         inputs=with_input(0, values=None, shm=shm_params(offset=REGION_BYTES))),
    Case("shm range past the region", "INVALID_ARGUMENT",
         inputs=with_input(0, values=None, shm=shm_params(offset=REGION_BYTES - 32))),
    Case("shm byte size missing", "INVALID_ARGUMENT",
         inputs=with_input(0, values=None, shm={"shared_memory_region": REGION})),
    Case("shm region name not a string", "INVALID_ARGUMENT",
         inputs=with_input(0, values=None, shm={"shared_memory_region": 5, "shared_memory_byte_size": 64})),
    Case("shm output region too small", "INVALID_ARGUMENT",
         outputs=[("OUTPUT0", shm_params(byte_size=16))], message="OUTPUT0"),
    # --- a decoupled model on a unary call: exactly one response
    Case("decoupled model, two responses", "INVALID_ARGUMENT", model="repeat_int32",
         inputs=[Input("IN", "INT32", [2], [4, 5])], message="ModelStreamInfer"),
    Case("decoupled model, no response", "INVALID_ARGUMENT", model="repeat_int32",
         inputs=[Input("IN", "INT32", [0], [])], message="without a response"),
    Case("decoupled model, DELAY count", "INVALID_ARGUMENT", model="repeat_int32",
         inputs=[Input("IN", "INT32", [2], [4, 5]), Input("DELAY", "UINT32", [3], [0, 0, 0])], message="DELAY"),
    # --- and the same requests succeed alike
    Case("good request", "OK"),
    Case("good request, version 1", "OK", version="1"),
    Case("classification", "OK", outputs=[("OUTPUT0", {"classification": 3})]),
    Case("decoupled model, one response", "OK", model="repeat_int32", inputs=[Input("IN", "INT32", [1], [4])]),
    Case("shm input", "OK", inputs=with_input(0, values=None, shm=shm_params())),
]


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-parity-") as path:
        write_model(path, "simple", SIMPLE_CONFIG)
        write_model(path, "identity_int8", IDENTITY.format(name="identity_int8", dtype="TYPE_INT8"))
        write_model(path, "identity_bytes", IDENTITY.format(name="identity_bytes", dtype="TYPE_STRING"))
        write_model(path, "repeat_int32", REPEAT_CONFIG)
        yield path


@pytest.fixture(scope="module")
def region():
    mem = shared_memory.SharedMemory(create=True, size=REGION_BYTES)
    mem.buf[0:64] = struct.pack("<16i", *range(16))
    yield "/" + mem.name
    mem.close()
    mem.unlink()


@pytest.fixture(scope="module")
def server(repo, region):
    s = InferaServer(repo, "--allow-client-shm=true")  # the test registers a region
    s.wait_ready()
    body = json.dumps({"key": region, "offset": 0, "byte_size": REGION_BYTES})
    status, _, data = s.request("POST", f"/v2/systemsharedmemory/region/{REGION}/register", body)
    assert status == 200, data
    yield s
    s.stop()


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def http_body(case):
    inputs = []
    for i in case.inputs if case.inputs is not None else good_inputs():
        tensor = {"name": i.name, "shape": i.shape, "datatype": i.datatype}
        params = dict(i.parameters)
        if i.shm is not None:
            params.update(i.shm)
        else:
            tensor["data"] = i.values if i.values is not None else []
        if params:
            tensor["parameters"] = params
        inputs.append(tensor)
    body = {"id": case.name, "inputs": inputs}
    if case.outputs:
        body["outputs"] = [{"name": n, "parameters": p} if p else {"name": n} for n, p in case.outputs]
    if case.parameters:
        body["parameters"] = case.parameters
    return json.dumps(body)


def set_param(target, key, value):
    if isinstance(value, bool):
        target[key].bool_param = value
    elif isinstance(value, int):
        target[key].int64_param = value
    elif isinstance(value, float):
        target[key].double_param = value
    else:
        target[key].string_param = value


def grpc_request(case):
    request = pb.ModelInferRequest(model_name=case.model, model_version=case.version, id=case.name)
    for i in case.inputs if case.inputs is not None else good_inputs():
        tensor = request.inputs.add(name=i.name, datatype=i.datatype, shape=i.shape)
        for key, value in {**i.parameters, **(i.shm or {})}.items():
            set_param(tensor.parameters, key, value)
        if i.shm is None and i.values:
            contents = getattr(tensor.contents, contents_field(i.datatype, i.values[0]))
            contents.extend(v.encode() if isinstance(v, str) else v for v in i.values)
    for name, params in case.outputs:
        output = request.outputs.add(name=name)
        for key, value in params.items():
            set_param(output.parameters, key, value)
    for key, value in case.parameters.items():
        set_param(request.parameters, key, value)
    return request


def http_answer(server, case):
    path = f"/v2/models/{case.model}" + (f"/versions/{case.version}" if case.version else "") + "/infer"
    status, _, data = server.request("POST", path, http_body(case), {"Content-Type": "application/json"})
    message = "" if status == 200 else json.loads(data).get("error", "")
    return status, message


def grpc_answer(stub, case):
    try:
        stub.ModelInfer(grpc_request(case), timeout=30)
        return "OK", ""
    except grpc.RpcError as e:
        return e.code().name, e.details()


def test_the_table_is_big_enough():
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)
    assert all(c.expect in HTTP_STATUS for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_same_error_class_on_both_transports(server, stub, case):
    http_status, http_message = http_answer(server, case)
    grpc_code, grpc_message = grpc_answer(stub, case)
    assert (grpc_code, http_status) == (case.expect, HTTP_STATUS[case.expect]), (
        f"HTTP {http_status} {http_message!r}; gRPC {grpc_code} {grpc_message!r}")
    if case.message:
        assert case.message in http_message and case.message in grpc_message, (http_message, grpc_message)


def test_a_stream_reports_the_same_classes_in_band(server, stub):
    """ModelStreamInfer answers each failing request in band; its message is the unary one."""
    failing = [c for c in CASES if c.expect != "OK" and c.model != "repeat_int32"]
    answers = {a.infer_response.id: a for a in stub.ModelStreamInfer(iter(grpc_request(c) for c in failing),
                                                                      timeout=60)}
    assert set(answers) == {c.name for c in failing}
    for case in failing:
        _, unary_message = grpc_answer(stub, case)
        answer = answers[case.name]
        assert answer.error_message == unary_message, case.name
        assert answer.infer_response.parameters["triton_final_response"].bool_param
