"""CPU placement (`--cpu-placement pinned`) and the allocator, over the real binary.

* pinned: the topology and the plan are in the log, and /proc/PID/task/*/status shows
  them applied: each pytorch instance thread on the CPU its "pinned instance" line names,
  every other thread of the server (HTTP, gRPC, loaders, intra-op pools of the warm-up)
  on the I/O CPUs of the plan.
* a 1-CPU cpuset (the server started with an affinity of one CPU): everything on it.
* none (the default): no placement lines, no thread narrowed.
* a bad --cpu-placement value: exit status 2-ish (non-zero) naming the flag and choices.
* the allocator the server logs is the one that serves malloc: the one the binary links
  (its ELF NEEDED entries), or one LD_PRELOADed over it.
"""

import os
import re
import subprocess
import tempfile
import threading

import pytest

from infera_server import BINARY, InferaServer, copy_model, demo_repo, thread_names_by_tid, wait_for

RANKER_REQUEST = {"inputs": [
    {"name": "dense_features", "shape": [1, 13], "datatype": "FP32", "data": [0.5] * 13},
    {"name": "categorical_ids", "shape": [1, 8], "datatype": "INT64", "data": [1] * 8}]}


def instances(count, threads):
    def edit(text):
        text = re.sub(r"(instance_group \[\s*\{\s*count: )\d+", rf"\g<1>{count}", text)
        return text + f'\nparameters {{ key: "INTRA_OP_THREAD_COUNT" value: {{ string_value: "{threads}" }} }}\n'
    return edit


@pytest.fixture(scope="module")
def repo():
    """ranker_a: 2 instances x 1 thread; ranker_b: 1 instance x 2 threads (an OpenMP team)."""
    path = tempfile.mkdtemp(prefix="cpu-placement-")
    copy_model(demo_repo(), "ranker", path, instances(2, 1), new_name="ranker_a")
    copy_model(demo_repo(), "ranker", path, instances(1, 2), new_name="ranker_b")
    yield path
    import shutil
    shutil.rmtree(path)


def thread_cpus(pid):
    """{tid: Cpus_allowed_list} of every thread of `pid`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                out[int(tid)] = re.search(r"Cpus_allowed_list:\s*(\S+)", f.read()).group(1)
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return out


def cpu_list(cpus):
    cpus, parts, i = sorted(cpus), [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)


def infer_until_pinned(server, model, names):
    """Concurrent requests to `model` until every instance in `names` logged its pinning
    (the scheduler hands work to idle instances, so concurrency reaches them all)."""
    def pinned():
        return all(f"pinned instance {n}:" in server.log() for n in names)

    answers = []

    def one():
        status, _, body = server.infer(model, RANKER_REQUEST)
        answers.append((status, body))

    def burst():
        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(status == 200 for status, _ in answers), answers
        return pinned()
    wait_for(burst, timeout=60, interval=0)


def pinned_threads(log):
    """{tid: cpu} from every "pinned instance" line."""
    out = {}
    for line in re.findall(r"pinned instance \S+: (.*)", log):
        for tid, cpu in re.findall(r"thread \d+ \(tid (\d+)\) -> CPU (\d+)", line):
            out[int(tid)] = cpu
    return out


def test_pinned_plan_is_applied(repo):
    server = InferaServer(repo, "--cpu-placement", "pinned")
    try:
        server.wait_ready()
        log = server.log()
        usable = sorted(os.sched_getaffinity(0))
        assert re.search(rf"cpu placement: topology: {len(usable)} usable CPUs? \({cpu_list(usable)}\)", log), log
        io = re.search(r"cpu placement: plan: I/O threads \(HTTP, gRPC and the server's other threads\) on CPU "
                       r"(\S+);", log)
        assert io, log
        io_cpus = io.group(1)
        # Every instance got its CPUs at load, one per thread.
        for name, threads in (("ranker_a_0", 1), ("ranker_a_1", 1), ("ranker_b_0", 2)):
            line = re.search(rf"cpu placement: instance {name}: (.*)", log)
            assert line and len(re.findall(r"-> CPU \d+", line.group(1))) == threads, log
        infer_until_pinned(server, "ranker_a", ["ranker_a_0", "ranker_a_1"])
        infer_until_pinned(server, "ranker_b", ["ranker_b_0"])
        log = server.log()
        pinned = pinned_threads(log)
        assert len(pinned) == 4, log  # 1 + 1 + a team of 2
        planned = {}
        for name in ("ranker_a_0", "ranker_a_1", "ranker_b_0"):
            planned[name] = re.findall(r"-> CPU (\d+)", re.search(rf"cpu placement: instance {name}: (.*)", log).group(1))
            applied = re.search(rf"pinned instance {name}: (.*)", log).group(1)
            assert re.findall(r"-> CPU (\d+)", applied) == planned[name], log
        actual = thread_cpus(server.process.pid)
        for tid, cpu in pinned.items():
            assert actual.get(tid) == cpu, (tid, cpu, actual, log)
        # Model-loading threads (admin executor, repository poller, start-up loaders) and the
        # unpinned threads they started (a loader's OpenMP team from a warm-up, named after
        # it) run on every CPU of the budget; everything else stays on the I/O CPUs.
        names = thread_names_by_tid(server.process.pid)
        loading = {tid: cpus for tid, cpus in actual.items()
                   if tid not in pinned and names.get(tid) in ("infera-admin", "infera-poll", "infera-loader")}
        assert {"infera-admin", "infera-poll"} <= {names[tid] for tid in loading}, names
        assert all(cpus == cpu_list(usable) for cpus in loading.values()), (loading, log)
        others = {tid: cpus for tid, cpus in actual.items() if tid not in pinned and tid not in loading}
        assert others and all(cpus == io_cpus for cpus in others.values()), (
            io_cpus, {tid: (names.get(tid), cpus) for tid, cpus in others.items()}, log)
        assert actual[server.process.pid] == io_cpus  # the main thread too
        server.assert_serving()
    finally:
        server.stop()


def test_one_cpu_cpuset_puts_everything_on_it(repo):
    usable = sorted(os.sched_getaffinity(0))
    only = usable[-1]
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {only})  # the child inherits it, as from a 1-CPU cpuset
    try:
        server = InferaServer(repo, "--cpu-placement", "pinned")
    finally:
        os.sched_setaffinity(0, saved)
    try:
        server.wait_ready()
        log = server.log()
        assert f"cpu placement: topology: 1 usable CPU ({only}) of " in log, log
        assert f"on CPU {only};" in log, log
        assert re.search(rf"^W.*cpu placement: instance ranker_a_0: thread 0 -> CPU {only} \(more threads than CPUs",
                         log, re.M), log  # a warning
        infer_until_pinned(server, "ranker_b", ["ranker_b_0"])
        assert set(thread_cpus(server.process.pid).values()) == {str(only)}
    finally:
        server.stop()


def test_default_places_nothing(repo):
    server = InferaServer(repo)
    try:
        server.wait_ready()
        infer_until_pinned_or_served = server.infer("ranker_b", RANKER_REQUEST)
        assert infer_until_pinned_or_served[0] == 200
        assert "cpu placement" not in server.log()
        everything = cpu_list(os.sched_getaffinity(0))
        assert set(thread_cpus(server.process.pid).values()) == {everything}
    finally:
        server.stop()


@pytest.mark.parametrize("value", ["", "static", "PINNED", "pinned,none", "0-1"])
def test_bad_placement_value_is_refused(repo, value):
    result = subprocess.run([BINARY, "serve", "--model-repository", repo, f"--cpu-placement={value}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    text = result.stdout + result.stderr
    assert "--cpu-placement" in text and "none, pinned" in text, text


def linked_allocator():
    """The allocator the binary's ELF NEEDED entries name; glibc without one."""
    needed = subprocess.run(["readelf", "-d", BINARY], capture_output=True, text=True, check=True).stdout
    for name in ("jemalloc", "tcmalloc"):
        if re.search(rf"NEEDED.*lib{name}", needed):
            return name
    return "glibc"


def started_allocator(repo, env=None):
    server = InferaServer(repo, env=env)
    try:
        match = wait_for(lambda: re.search(r"allocator: (\w+) (\S+) \((\S+)\)", server.log()))
        return match.group(1), match.group(3)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def simple_repo():
    path = tempfile.mkdtemp(prefix="allocator-")
    copy_model(demo_repo(), "simple", path)
    yield path
    import shutil
    shutil.rmtree(path)


def test_logs_the_linked_allocator(simple_repo):
    name, library = started_allocator(simple_repo)
    assert name == linked_allocator()
    assert os.path.exists(library)


@pytest.mark.parametrize("name,library", [("jemalloc", "libjemalloc.so.2"), ("tcmalloc", "libtcmalloc_minimal.so.4")])
def test_logs_a_preloaded_allocator(simple_repo, name, library):
    path = next((os.path.join(d, library) for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                                    "/usr/lib64", "/usr/lib") if os.path.exists(os.path.join(d, library))),
                None)
    if path is None:
        pytest.skip(f"{library} not installed (scripts/install_deps.sh)")
    assert started_allocator(simple_repo, env={"LD_PRELOAD": path}) == (name, path)
