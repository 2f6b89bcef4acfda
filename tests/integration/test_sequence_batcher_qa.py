"""What Triton's qa/L0_sequence_batcher (sequence_batcher_test.py) checks, against infera's
`accumulate` model, over HTTP and gRPC (docs/compatibility.md counts the functions).

Triton's qa sequence models are accumulators: each output element is the running sum of
the sequence's input elements since its START. Triton's script runs each check against
four repositories (models0: no batching, 4 instances; models1: 1 instance × batch 4;
models2: 2 × 2; models4: 4 × 1) and compares the model statistics (executions per batch
size) afterwards. Its batch-composition checks rely on TRITONSERVER_DELAY_SCHEDULER, a
test hook that holds Triton's scheduler until N requests are queued; infera has no such
hook, so where the composition matters the model here holds its batches with the direct
strategy's max_queue_delay_microseconds and minimum_slot_utilization instead, which makes
the composition deterministic without one.

Written from what Triton's tests check; none of Triton's code is used.
"""

import json
import shutil
import struct
import tempfile
import threading
import time

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, wait_for, write_model

CONTROLS = """control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] } ]"""

IDLE_S = 5.0  # Triton's qa models: max_sequence_idle_microseconds 5 s
SHORT_IDLE_S = 1.5  # the idle-timeout check's model
QUEUE_DELAY_S = 1.5  # the queue-delay checks' models (Triton's use 3 s)


def config(name, max_batch_size, instances, direct="", idle_s=IDLE_S):
    return f"""
name: "{name}"
backend: "accumulate"
max_batch_size: {max_batch_size}
input [ {{ name: "INPUT" data_type: TYPE_INT32 dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_INT32 dims: [ -1 ] }} ]
instance_group [ {{ count: {instances} kind: KIND_CPU }} ]
sequence_batching {{
  max_sequence_idle_microseconds: {int(idle_s * 1e6)}
  direct {{ {direct} }}
  {CONTROLS}
}}
"""


# Triton's four repositories, as four models.
TRIALS = {"models0": (0, 4), "models1": (4, 1), "models2": (2, 2), "models4": (1, 4)}
LONG_HOLD = "max_queue_delay_microseconds: 60000000"  # holds never expire within a test


def queue_delay(utilization):
    return f"max_queue_delay_microseconds: {int(QUEUE_DELAY_S * 1e6)} minimum_slot_utilization: {utilization}"


MODELS = {name: config(name, mbs, count) for name, (mbs, count) in TRIALS.items()}
MODELS.update({
    # Stand-ins for TRITONSERVER_DELAY_SCHEDULER: run only once all (half) of the 4 slots are ready.
    "hold_full": config("hold_full", 4, 1, f"{LONG_HOLD} minimum_slot_utilization: 1"),
    "hold_half": config("hold_half", 4, 1, f"{LONG_HOLD} minimum_slot_utilization: 0.5"),
    # Triton's queue_delay_models: 1 instance × batch 4, a delay and utilization 0 / 0.5 / 1.
    "delay_none": config("delay_none", 4, 1, queue_delay(0)),
    "delay_half": config("delay_half", 4, 1, queue_delay(0.5)),
    "delay_full": config("delay_full", 4, 1, queue_delay(1)),
    "short_idle": config("short_idle", 4, 1, idle_s=SHORT_IDLE_S),
    # Beyond Triton's script: the oldest strategy's preferred size and delay.
    "oldest_preferred": f"""
name: "oldest_preferred"
backend: "accumulate"
max_batch_size: 4
input [ {{ name: "INPUT" data_type: TYPE_INT32 dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_INT32 dims: [ -1 ] }} ]
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
sequence_batching {{
  max_sequence_idle_microseconds: {int(IDLE_S * 1e6)}
  oldest {{ max_candidate_sequences: 4 preferred_batch_size: [ 2 ]
           max_queue_delay_microseconds: {int(QUEUE_DELAY_S * 1e6)} }}
  control_input [
    {{ name: "START" control [ {{ kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "END" control [ {{ kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "READY" control [ {{ kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "CORRID" control [ {{ kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 }} ] }} ]
}}
""",
})


class InferError(Exception):
    pass


class HttpClient:
    def __init__(self, server):
        self.conn = server.connection()

    def infer(self, model, values, sequence_id, start=False, end=False, rows=1):
        parameters = {"sequence_id": sequence_id}
        if start:
            parameters["sequence_start"] = True
        if end:
            parameters["sequence_end"] = True
        shape = [len(values)] if model == "models0" else [rows, len(values)]
        body = {"parameters": parameters,
                "inputs": [{"name": "INPUT", "datatype": "INT32", "shape": shape, "data": values * rows}]}
        self.conn.request("POST", f"/v2/models/{model}/infer", json.dumps(body), {"Content-Type": "application/json"})
        response = self.conn.getresponse()
        answer = json.loads(response.read())
        if response.status != 200:
            raise InferError(answer["error"])
        return answer["outputs"][0]["data"][:len(values)]

    def close(self):
        self.conn.close()


class GrpcClient:
    def __init__(self, stub):
        self.stub = stub

    def infer(self, model, values, sequence_id, start=False, end=False, rows=1):
        request = pb.ModelInferRequest(model_name=model)
        shape = [len(values)] if model == "models0" else [rows, len(values)]
        request.inputs.add(name="INPUT", datatype="INT32", shape=shape)
        request.raw_input_contents.append(struct.pack(f"<{len(values) * rows}i", *(values * rows)))
        request.parameters["sequence_id"].uint64_param = sequence_id
        if start:
            request.parameters["sequence_start"].bool_param = True
        if end:
            request.parameters["sequence_end"].bool_param = True
        try:
            response = self.stub.ModelInfer(request, timeout=60)
        except grpc.RpcError as e:
            raise InferError(e.details()) from None
        return list(struct.unpack(f"<{len(values)}i", response.raw_output_contents[0][:4 * len(values)]))

    def close(self):
        pass


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-seq-qa-")
    for name, text in MODELS.items():
        write_model(repo, name, text)
    s = InferaServer(repo)
    try:
        s.wait_ready()
        yield s
    finally:
        s.stop()
        shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


@pytest.fixture(params=["http", "grpc"])
def client_factory(request, server, stub):
    """A function making a client of the parametrized protocol (one per thread)."""
    made = []

    def make():
        client = HttpClient(server) if request.param == "http" else GrpcClient(stub)
        made.append(client)
        return client
    yield make
    for c in made:
        c.close()


def stats(server, model):
    """(executions per batch size, executions, inferences) of `model` so far."""
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200
    s = body["model_stats"][0]
    batches = {b["batch_size"]: b["compute_infer"]["count"] for b in s.get("batch_stats", [])}
    return batches, s["execution_count"], s["inference_count"]


def stats_delta(before, after):
    batches = {size: count - before[0].get(size, 0) for size, count in after[0].items()}
    return {size: count for size, count in batches.items() if count}, after[1] - before[1], after[2] - before[2]


def run_sequence(client, model, sequence_id, steps, width=1, total=0):
    """Sends steps [(flags, value, before)] in order; checks every answer against the
    accumulator and returns (last output, seconds spent waiting for answers). `before` is
    None, a function to call first (waiting on an event), or seconds to pause: a pause is
    part of the scenario (a client idle between requests), as Triton's pre-delays.
    `total`: the sum so far, when continuing a sequence."""
    waited = 0.0
    for flags, value, before in steps:
        if callable(before):
            before()
        elif before:
            time.sleep(before)
        start, end = "start" in flags, "end" in flags
        total = (0 if start else total) + value * width
        sent = time.monotonic()
        out = client.infer(model, [value] * width, sequence_id, start=start, end=end)
        waited += time.monotonic() - sent
        assert out == [total] * width, f"sequence {sequence_id}: sent {value}, expected {total}"
    return total, waited


def run_concurrently(jobs):
    """Runs each job (a no-argument function) on its own thread; re-raises the first failure."""
    failures, results = [], [None] * len(jobs)

    def body(i, job):
        try:
            results[i] = job()
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            failures.append(e)
    threads = [threading.Thread(target=body, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return results


def seq(*values, end=True):
    """Steps: START on the first value, END on the last (unless end=False)."""
    steps = []
    for i, v in enumerate(values):
        flags = ("start" if i == 0 else "") + ("end" if end and i == len(values) - 1 else "")
        steps.append((flags, v, None))
    return steps


# --- test_simple_sequence, test_length1_sequence, test_no_sequence_end -------------------

@pytest.mark.parametrize("model", list(TRIALS))
def test_simple_sequence(server, client_factory, model):
    before = stats(server, model)
    assert run_sequence(client_factory(), model, 5, seq(*range(1, 10)))[0] == 45
    assert stats_delta(before, stats(server, model)) == ({1: 9}, 9, 9)


@pytest.mark.parametrize("model", list(TRIALS))
def test_length1_sequence(server, client_factory, model):
    before = stats(server, model)
    assert run_sequence(client_factory(), model, 99, [("start,end", 42, None)])[0] == 42
    assert stats_delta(before, stats(server, model)) == ({1: 1}, 1, 1)


@pytest.mark.parametrize("model", list(TRIALS))
def test_no_sequence_end(server, client_factory, model):
    # START on an active sequence restarts it: 42 + 9.
    steps = [("start", 1, None), ("", 2, None), ("start", 42, None), ("end", 9, None)]
    before = stats(server, model)
    assert run_sequence(client_factory(), model, 4566, steps)[0] == 51
    assert stats_delta(before, stats(server, model)) == ({1: 4}, 4, 4)


# --- the errors: test_batch_size, test_no_correlation_id, test_no_sequence_start(2) ------

@pytest.mark.parametrize("model", ["models1", "models2"])  # models4's limit is 1 row; models0 has no batch
def test_batch_size(client_factory, model):
    with pytest.raises(InferError) as e:
        client_factory().infer(model, [1], 27, start=True, rows=2)
    assert str(e.value).startswith(
        f"inference request to model '{model}' must specify batch-size 1 due to requirements of sequence batcher")


@pytest.mark.parametrize("model", list(TRIALS))
def test_no_correlation_id(client_factory, model):
    with pytest.raises(InferError) as e:
        client_factory().infer(model, [1], 0, start=True)
    assert str(e.value).startswith(
        f"inference request to model '{model}' must specify a non-zero or non-empty correlation ID")


@pytest.mark.parametrize("model", list(TRIALS))
def test_no_sequence_start(client_factory, model):
    with pytest.raises(InferError) as e:
        client_factory().infer(model, [1], 37469245)
    assert str(e.value).startswith(f"inference request for sequence 37469245 to model '{model}' must specify the "
                                   "START flag on the first request of the sequence")


@pytest.mark.parametrize("model", list(TRIALS))
def test_no_sequence_start2(server, client_factory, model):
    client = client_factory()
    before = stats(server, model)
    assert run_sequence(client, model, 3, seq(1, 2, 3))[0] == 6
    with pytest.raises(InferError) as e:
        client.infer(model, [55], 3)  # the sequence ended: 3 is unknown again
    assert str(e.value).startswith(f"inference request for sequence 3 to model '{model}' must specify the "
                                   "START flag on the first request of the sequence")
    assert stats_delta(before, stats(server, model)) == ({1: 3}, 3, 3)


# --- batching: test_full_batch, test_half_batch, test_skip_batch, test_ragged_batch ------

def test_full_batch(server, client_factory):
    # Four equal sequences on 4 slots: three executions of 4 rows.
    before = stats(server, "hold_full")
    sequences = {1001: (1, 2, 3), 1002: (11, 12, 13), 1003: (111, 112, 113), 1004: (1111, 1112, 1113)}
    results = run_concurrently([lambda sid=sid, v=v: run_sequence(client_factory(), "hold_full", sid, seq(*v))[0]
                                for sid, v in sequences.items()])
    assert results == [6, 36, 336, 3336]
    assert stats_delta(before, stats(server, "hold_full")) == ({4: 3}, 3, 12)


def test_half_batch(server, client_factory):
    # Two sequences on 4 slots (slots 0 and 1): four executions of 2 rows.
    before = stats(server, "hold_half")
    results = run_concurrently([lambda: run_sequence(client_factory(), "hold_half", 987, seq(1, 2, 3, 4))[0],
                                lambda: run_sequence(client_factory(), "hold_half", 988, seq(0, 9, 5, 13))[0]])
    assert results == [10, 27]
    assert stats_delta(before, stats(server, "hold_half")) == ({2: 4}, 4, 8)


def wait_pending(server, model, count):
    wait_for(lambda: server.model_gauge("nv_inference_pending_request_count", model) >= count, timeout=10)


def test_skip_batch(server, client_factory):
    # The long sequences take slots 0 and 1; once the short ones (slots 2, 3) end, the
    # batches shrink to 2 rows: 2 executions of 4 rows, then 2 of 2 (the held ones run
    # when the queue delay expires).
    model = "delay_full"
    before = stats(server, model)
    long_jobs = [lambda: run_sequence(client_factory(), model, 1002, seq(11, 12, 13, 14))[0],
                 lambda: run_sequence(client_factory(), model, 1004, seq(1111, 1112, 1113, 1114))[0]]
    short_jobs = [lambda: run_sequence(client_factory(), model, 1001, seq(1, 3))[0],
                  lambda: run_sequence(client_factory(), model, 1003, seq(111, 113))[0]]
    results = {}

    def long_first():
        results["long"] = run_concurrently(long_jobs)
    first = threading.Thread(target=long_first)
    first.start()
    wait_pending(server, model, 2)  # both long STARTs hold slots 0 and 1
    results["short"] = run_concurrently(short_jobs)
    first.join()
    assert results == {"long": [50, 4450], "short": [4, 224]}
    assert stats_delta(before, stats(server, model)) == ({4: 2, 2: 2}, 4, 12)


def test_ragged_batch(server, client_factory):
    # Inputs of different shapes are not batched together; each row of n values v adds n·v.
    model = "models1"
    jobs = [lambda sid=sid, v=v, w=w: run_sequence(client_factory(), model, sid, seq(*v), width=w)[0]
            for sid, v, w in ((1001, (1, 2, 3), 2), (1002, (11, 12, 13), 2), (1003, (111, 112, 113), 1),
                              (1004, (1111, 1112, 1113), 3))]
    before = stats(server, model)
    assert run_concurrently(jobs) == [12, 72, 336, 10008]
    assert stats_delta(before, stats(server, model))[2] == 12


# --- the backlog: test_backlog, test_backlog_fill(_no_end), test_backlog_same_correlation_id(_no_end)

def test_backlog(server, client_factory):
    # Five sequences on 4 slots: the fifth waits in the backlog until the others end, then
    # runs alone in slot 0 (each of its requests held for the queue delay).
    model = "delay_full"
    sequences = {1001: (1, 2, 3), 1002: (11, 12, 13), 1003: (111, 112, 113), 1004: (1111, 1112, 1113),
                 1005: (11111, 11112, 11113)}
    before = stats(server, model)
    results = run_concurrently([lambda sid=sid, v=v: run_sequence(client_factory(), model, sid, seq(*v))[0]
                                for sid, v in sequences.items()])
    assert sorted(results) == [6, 36, 336, 3336, 33336]
    assert stats_delta(before, stats(server, model)) == ({4: 3, 1: 3}, 6, 15)


def backlog_scenario(server, client_factory, model, backlog_steps):
    """Four sequences hold the 4 slots (1002 and 1003 short); the `backlog_steps`
    sequences (1005, 1006) arrive while every slot is taken, so they wait in the backlog,
    and the short ones' ENDs (sent only then) free the slots they take."""
    admitted = threading.Event()
    first_answered = threading.Semaphore(0)

    def answered():
        first_answered.release()

    def answered_then_wait():
        first_answered.release()
        assert admitted.wait(timeout=30)
    held = [lambda: run_sequence(client_factory(), model, 1001, [("start", 1, None), ("", 2, answered), ("end", 3, None)])[0],
            lambda: run_sequence(client_factory(), model, 1002, [("start", 11, None), ("end", 13, answered_then_wait)])[0],
            lambda: run_sequence(client_factory(), model, 1003, [("start", 111, None), ("end", 113, answered_then_wait)])[0],
            lambda: run_sequence(client_factory(), model, 1004, [("start", 1111, None), ("", 1112, answered),
                                                                 ("end", 1113, None)])[0]]
    backlog = [lambda sid=sid, steps=steps: run_sequence(client_factory(), model, sid, steps)[0]
               for sid, steps in backlog_steps.items()]
    results = {"held": [None] * 4}
    threads = [threading.Thread(target=lambda i=i, job=job: results["held"].__setitem__(i, job()))
               for i, job in enumerate(held)]
    second = []
    try:
        for i, t in enumerate(threads):
            t.start()
            if i < 3:  # each START admitted before the next: 1001..1004 take slots 0..3
                wait_pending(server, model, i + 1)
        for _ in range(4):  # the first batch ran; every slot stays taken
            assert first_answered.acquire(timeout=30)
        wait_pending(server, model, 2)  # 1001's and 1004's second requests
        # 1005 enters the backlog before 1006, so 1005 takes the first slot that frees.
        results["backlog"] = [None] * len(backlog)
        second = [threading.Thread(target=lambda i=i, job=job: results["backlog"].__setitem__(i, job()))
                  for i, job in enumerate(backlog)]
        second[0].start()
        wait_pending(server, model, 3)
        second[1].start()
        wait_pending(server, model, 4)  # the backlog STARTs wait with 1001's and 1004's next requests
    finally:
        admitted.set()
    for t in threads + second:
        t.join()
    assert None not in results["held"] + results["backlog"], "a sequence failed"
    return results


def test_backlog_fill(server, client_factory):
    model = "hold_full"
    before = stats(server, model)
    results = backlog_scenario(server, client_factory, model, {1005: [("start,end", 11111, None)],
                                                               1006: [("start,end", 22222, None)]})
    assert results == {"held": [6, 24, 224, 3336], "backlog": [11111, 22222]}
    # Every execution had all 4 slots ready: the backlog sequences filled the short ones' slots.
    assert stats_delta(before, stats(server, model)) == ({4: 3}, 3, 12)


def test_backlog_fill_no_end(server, client_factory):
    # As test_backlog_fill, but sequence 1006 takes a slot before its END arrives.
    model = "delay_full"
    before = stats(server, model)
    results = backlog_scenario(server, client_factory, model,
                               {1005: [("start,end", 11111, None)],
                                1006: [("start", 22222, None), ("", 22223, None), ("end", 22224, 0.2)]})
    assert results == {"held": [6, 24, 224, 3336], "backlog": [11111, 66669]}
    # 1006 took slot 2 (1003's): its last two requests run alone, held for the delay, as 3 rows.
    assert stats_delta(before, stats(server, model)) == ({4: 3, 3: 2}, 5, 14)


def test_backlog_same_correlation_id(server, client_factory):
    # A new sequence reusing the id of one that ended starts afresh (11111 + 11113), alone.
    model = "delay_full"
    before = stats(server, model)
    first = run_concurrently([lambda sid=sid, v=v: run_sequence(client_factory(), model, sid, seq(*v))[0]
                              for sid, v in {1001: (1, 2, 3), 1002: (11, 12, 13), 1003: (111, 112, 113),
                                             1004: (1111, 1112, 1113)}.items()])
    assert first == [6, 36, 336, 3336]
    assert run_sequence(client_factory(), model, 1002, seq(11111, 11113))[0] == 22224
    assert stats_delta(before, stats(server, model)) == ({4: 3, 1: 2}, 5, 14)


def test_backlog_same_correlation_id_no_end(server, client_factory):
    # Sequence 1001 never ends; a START with its id restarts it in the same slot, so every
    # execution has all 4 slots ready.
    model = "hold_full"

    def twice_1001():
        client = client_factory()
        return (run_sequence(client, model, 1001, seq(1, 3, end=False))[0],
                run_sequence(client, model, 1001, seq(11111, 11113))[0])
    others = [lambda sid=sid, v=v: run_sequence(client_factory(), model, sid, seq(*v))[0]
              for sid, v in {1002: (11, 12, 12, 13), 1003: (111, 112, 112, 113), 1004: (1111, 1112, 1112, 1113)}.items()]
    before = stats(server, model)
    assert run_concurrently([twice_1001] + others) == [(4, 22224), 48, 448, 4448]
    assert stats_delta(before, stats(server, model)) == ({4: 4}, 4, 16)


def test_backlog_sequence_timeout(server, client_factory):
    # Sequence 1001 goes quiet past the idle time: its slot goes to the waiting fifth
    # sequence, and its late request, without START, is refused.
    model = "short_idle"
    quiet = client_factory()
    assert run_sequence(quiet, model, 1001, seq(1, end=False))[0] == 1
    step = SHORT_IDLE_S / 3  # the busy sequences never go idle
    started = threading.Semaphore(0)

    def busy(sid, v):
        client = client_factory()
        total = run_sequence(client, model, sid, [("start", v[0], None)])[0]
        started.release()  # every slot is taken once the three busy STARTs are answered
        return run_sequence(client, model, sid, [("", v[1], step), ("", v[1], step), ("end", v[2], step)],
                            total=total)[0]

    def fifth():
        for _ in range(3):
            assert started.acquire(timeout=30)
        return run_sequence(client_factory(), model, 1005, seq(11111, 11113))
    jobs = [lambda sid=sid, v=v: busy(sid, v)
            for sid, v in {1002: (11, 12, 13), 1003: (111, 112, 113), 1004: (1111, 1112, 1113)}.items()]
    results = run_concurrently(jobs + [fifth])
    assert results[:3] == [48, 448, 4448]
    assert results[3][0] == 22224
    assert results[3][1] >= SHORT_IDLE_S * 0.5, "the fifth waited in the backlog for 1001's slot to idle out"
    with pytest.raises(InferError) as e:
        quiet.infer(model, [3], 1001)
    assert str(e.value).startswith(f"inference request for sequence 1001 to model '{model}' must specify the "
                                   "START flag on the first request of the sequence")


# --- the queue delay: test_queue_delay_{no,half,full}_min_util ---------------------------
# Sequence A (one request) starts; 1/3 of the delay later sequence B (two requests).

def queue_delay_scenario(client_factory, model, b_pre_delay=0.0):
    gap = QUEUE_DELAY_S / 3

    def b():
        time.sleep(gap)  # B starts after A (the scenario's ordering, as Triton's 1 s sleep)
        return run_sequence(client_factory(), model, 1002, [("start", 11, None), ("", 12, b_pre_delay)])
    a, b = run_concurrently([lambda: run_sequence(client_factory(), model, 1001, [("start", 1, None)]), b])
    assert (a[0], b[0]) == (1, 23)
    return a[1], b[1]


def test_queue_delay_no_min_util(server, client_factory):
    before = stats(server, "delay_none")
    a_waited, b_waited = queue_delay_scenario(client_factory, "delay_none")
    assert a_waited < QUEUE_DELAY_S * 0.5 and b_waited < QUEUE_DELAY_S * 0.5, "utilization 0: nothing is held"
    # Nothing held A back for B: three executions (Triton's hook gathers A and B first: {2: 2}).
    assert stats_delta(before, stats(server, "delay_none")) == ({1: 1, 2: 2}, 3, 3)


def test_queue_delay_half_min_util(server, client_factory):
    # A (1 of 4 slots) waits for B (2 of 4); B's second request, alone, waits out the delay.
    before = stats(server, "delay_half")
    a_waited, b_waited = queue_delay_scenario(client_factory, "delay_half")
    assert a_waited < QUEUE_DELAY_S
    assert QUEUE_DELAY_S <= b_waited < QUEUE_DELAY_S * 2
    assert stats_delta(before, stats(server, "delay_half")) == ({2: 2}, 2, 3)


def test_queue_delay_full_min_util(server, client_factory):
    # Utilization 1 is never reached with two sequences: every batch waits out the delay,
    # counted from its oldest request (A's for the first batch).
    before = stats(server, "delay_full")
    a_waited, b_waited = queue_delay_scenario(client_factory, "delay_full", b_pre_delay=QUEUE_DELAY_S / 2)
    assert QUEUE_DELAY_S <= a_waited < QUEUE_DELAY_S * 2
    assert QUEUE_DELAY_S * 1.5 <= b_waited < QUEUE_DELAY_S * 3
    assert stats_delta(before, stats(server, "delay_full")) == ({2: 2}, 2, 3)


# --- beyond Triton's script: the oldest strategy holds for its preferred batch size ------

def test_oldest_holds_for_the_preferred_batch_size(server, client_factory):
    model = "oldest_preferred"
    a, b = client_factory(), client_factory()
    before = stats(server, model)
    started = {}
    first = threading.Thread(target=lambda: started.update(a=run_sequence(a, model, 2001, [("start", 1, None)])))
    first.start()
    wait_pending(server, model, 1)  # A's START is held: one ready sequence is not the preferred 2
    assert run_sequence(b, model, 2002, [("start", 10, None)])[0] == 10  # B completes the pair
    first.join()
    assert started["a"][0] == 1
    # A alone again: held until the delay, then run as what is ready.
    total, waited = run_sequence(a, model, 2001, [("", 2, None)], total=1)
    assert total == 3 and waited >= QUEUE_DELAY_S
    # Both END together: a preferred pair again, keyed by CORRID (rows are not slots).
    ends = run_concurrently([lambda: run_sequence(a, model, 2001, [("end", 3, None)], total=3),
                             lambda: run_sequence(b, model, 2002, [("end", 20, None)], total=10)])
    assert [e[0] for e in ends] == [6, 30]
    assert stats_delta(before, stats(server, model)) == ({2: 2, 1: 1}, 3, 5)
