"""Launches on CuPy's and PyTorch's arrays and streams, symbols, graphs, tunes and the tuned
kernel, against NumPy on fresh random inputs, sizes that are not multiples of the block, outputs
poisoned first. Skipped without a GPU."""
import json
import threading

import numpy as np
import pytest

import ptxrt
from ptxrt import kernel_tuner
from conftest import KERNEL_TUNER_SET, REPOSITORY

pytestmark = pytest.mark.gpu

SAXPY = r'''
__constant__ float offsets[4];
extern "C" __global__ void saxpy(float* out, const float* x, const float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i] + offsets[i % 4] * SCALE;
}
extern "C" __global__ void increment(int* counter) { atomicAdd(counter, 1); }
'''
N = 100_003  # not a multiple of any block
KERNELS = REPOSITORY / "tests" / "data" / "kernels"


@pytest.fixture
def rng():
    return np.random.default_rng()


def saxpy_kernel(scale=1, context=None):
    module = ptxrt.Jit.shared().module(ptxrt.Program(SAXPY, "saxpy.cu"), context=context,
                                       defines={"SCALE": scale})
    return module, module.kernel("saxpy")


def expected(x, y, a, offsets=np.zeros(4, np.float32), scale=1):
    return (np.float32(a) * x + y + np.tile(offsets, len(x) // 4 + 1)[: len(x)] * scale).astype(np.float32)


def test_a_launch_on_cupy_arrays_and_stream_matches_numpy(rng):
    cupy = pytest.importorskip("cupy")
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    module, saxpy = saxpy_kernel()
    module.symbol("offsets").set(np.zeros(4, np.float32))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        out = cupy.full(N, cupy.nan, cupy.float32)
        device_x, device_y = cupy.asarray(x), cupy.asarray(y)
    start, end = ptxrt.Event(), ptxrt.Event()
    start.record(stream)
    saxpy(ptxrt.blocks_for(N, 256), 256, (out, device_x, device_y, 1.5, N), stream=stream)
    end.record(stream)
    stream.synchronize()
    np.testing.assert_allclose(out.get(), expected(x, y, 1.5), rtol=1e-6)
    assert ptxrt.Event.elapsed_ms(start, end) > 0


def test_a_launch_on_pytorch_tensors_on_its_stream_matches_numpy(rng):
    torch = pytest.importorskip("torch")
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    offsets = rng.random(4, np.float32)
    out = torch.full((N,), float("nan"), device="cuda")
    module, saxpy = saxpy_kernel(scale=2)
    module.symbol("offsets").set(offsets)
    np.testing.assert_array_equal(module.symbol("offsets").get(np.float32), offsets)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    stream.synchronize()
    saxpy.launch(ptxrt.blocks_for(N, 128), 128, (out, tx, ty, -0.5, N), stream=stream)
    stream.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), expected(x, y, -0.5, offsets, 2), rtol=1e-6)


class OnlyDLPack:
    """An array that offers DLPack alone, as JAX's do."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_arrays_and_ptxrt_arrays_launch_alike(rng):
    cupy = pytest.importorskip("cupy")
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    out = ptxrt.DeviceArray(N, np.float32)
    out.fill_bytes(0xFF)
    module, saxpy = saxpy_kernel()
    module.symbol("offsets").set(np.zeros(4, np.float32))
    saxpy(ptxrt.blocks_for(N, 512), 512,
          (out, OnlyDLPack(cupy.asarray(x)), ptxrt.to_device(y), np.float32(3.0), np.int32(N)))
    np.testing.assert_allclose(out.to_numpy(), expected(x, y, 3.0), rtol=1e-6)
    np.testing.assert_allclose(cupy.asarray(out).get(), expected(x, y, 3.0), rtol=1e-6)


CYCLES = 50_000_000  # about 25 ms: far longer than the copy


def late_kernels():
    module = ptxrt.Jit.shared().module(ptxrt.Program.from_file(KERNELS / "late_fill.cu"))
    return module.kernel("late_fill"), module.kernel("copy")


def test_a_launch_waits_for_the_stream_that_wrote_a_cupy_array():
    cupy = pytest.importorskip("cupy")
    late_fill, copy = late_kernels()
    written = cupy.zeros(N, cupy.float32)
    out = ptxrt.DeviceArray(N, np.float32)
    out.fill_bytes(0xFF)
    cupy.cuda.Device().synchronize()
    writer, reader = cupy.cuda.Stream(non_blocking=True), ptxrt.Stream()
    with writer:  # CuPy's arrays name the current stream in __cuda_array_interface__
        late_fill(ptxrt.blocks_for(N, 256), 256, (written, N, CYCLES, 7.0), stream=writer)
        copy(ptxrt.blocks_for(N, 256), 256, (out, written, N), stream=reader)
    reader.synchronize()
    assert (out.to_numpy() == 7.0).all()


def test_a_launch_on_numba_arrays_waits_for_their_stream_and_matches_numpy(rng):
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("Numba sees no CUDA device")
    late_fill, copy = late_kernels()
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    module, saxpy = saxpy_kernel()
    module.symbol("offsets").set(np.zeros(4, np.float32))
    out = numba_cuda.to_device(np.full(N, np.nan, np.float32))
    saxpy(ptxrt.blocks_for(N, 256), 256,
          (out, numba_cuda.to_device(x), numba_cuda.to_device(y), 2.5, N))
    numba_cuda.synchronize()
    np.testing.assert_allclose(out.copy_to_host(), expected(x, y, 2.5), rtol=1e-6)
    # A Numba array bound to a stream names it; a launch elsewhere waits for that stream.
    writer = numba_cuda.stream()
    written = numba_cuda.device_array(N, np.float32, stream=writer)
    handle = writer.handle  # a ctypes pointer, or a CUstream of NVIDIA's bindings
    late_fill(ptxrt.blocks_for(N, 256), 256, (written, N, CYCLES, 5.0),
              stream=handle.value if hasattr(handle, "value") else int(handle))
    copied = ptxrt.DeviceArray(N, np.float32)
    copied.fill_bytes(0xFF)
    copy(ptxrt.blocks_for(N, 256), 256, (copied, written, N))
    assert (copied.to_numpy() == 5.0).all()


def test_a_pytorch_tensor_from_dlpack_is_read_after_its_stream_wrote_it():
    torch = pytest.importorskip("torch")
    late_fill, copy = late_kernels()
    written = torch.zeros(N, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    writer = torch.cuda.Stream()
    out = ptxrt.DeviceArray(N, np.float32)
    out.fill_bytes(0xFF)
    with torch.cuda.stream(writer):  # __dlpack__(stream=) orders PyTorch's current stream
        late_fill(ptxrt.blocks_for(N, 256), 256, (written, N, CYCLES, 3.0), stream=writer)
        copy(ptxrt.blocks_for(N, 256), 256, (out, OnlyDLPack(written), N))
    assert (out.to_numpy() == 3.0).all()


class StreamZero:
    __cuda_array_interface__ = {"shape": (16,), "typestr": "<f4", "data": (0, False),
                                "version": 3, "stream": 0}


def test_launches_are_checked_before_the_driver_sees_them():
    _, saxpy = saxpy_kernel()
    buffer = ptxrt.DeviceArray(16, np.float32)
    with pytest.raises(ptxrt.Error, match="takes 5 arguments, 3 given") as raised:
        saxpy(1, 32, (buffer, buffer, buffer))
    assert raised.value.kind == "invalid_argument"
    with pytest.raises(ptxrt.Error, match="host array"):
        saxpy(1, 32, (buffer, np.zeros(16, np.float32), buffer, 1.0, 16))
    with pytest.raises(ptxrt.Error, match="does not fit"):
        saxpy(1, 32, (buffer, buffer, buffer, 1.0, 2**40))
    with pytest.raises(ptxrt.Error, match="2048"):
        saxpy(1, 2048, (buffer, buffer, buffer, 1.0, 16))
    with pytest.raises(ptxrt.Error, match="stream 0, which the interface forbids"):
        saxpy(1, 32, (buffer, StreamZero(), buffer, 1.0, 16))


def test_a_graph_captured_from_launches_replays_them():
    module = ptxrt.Jit.shared().module(ptxrt.Program(SAXPY), defines={"SCALE": 1})
    increment = module.kernel("increment")
    counter = ptxrt.to_device(np.zeros(1, np.int32))
    stream = ptxrt.Stream()
    stream.begin_capture()
    increment.launch(3, 64, (counter,), stream=stream)
    graph = stream.end_capture()
    assert graph.node_count == 1 and counter.to_numpy()[0] == 0
    runnable = graph.instantiate()
    for _ in range(4):
        runnable.launch(stream)
    stream.synchronize()
    assert counter.to_numpy()[0] == 4 * 3 * 64


def test_threads_compile_and_launch_at_once(rng, private_cache):
    jit = ptxrt.Jit(cache_directory=private_cache / "threads")
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    failures = []

    def run(scale):
        try:
            module = jit.module(ptxrt.Program(SAXPY), defines={"SCALE": scale})
            offsets = np.full(4, 1.0, np.float32)
            module.symbol("offsets").set(offsets)
            out = ptxrt.DeviceArray(N, np.float32)
            module.kernel("saxpy")(ptxrt.blocks_for(N, 256), 256,
                                   (out, ptxrt.to_device(x), ptxrt.to_device(y), 2.0, N))
            np.testing.assert_allclose(out.to_numpy(), expected(x, y, 2.0, offsets, scale), rtol=1e-6)
        except Exception as error:  # reported below, on the test's thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(scale,)) for scale in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert jit.stats()["compiles"] == 6


def test_a_tune_records_its_winner_and_the_tuned_kernel_launches_it(private_cache, rng):
    cupy = pytest.importorskip("cupy")
    database = private_cache / "tuning.json"
    problem = ptxrt.Problem.from_file(KERNEL_TUNER_SET / "vector_add.json",
                                      KERNEL_TUNER_SET / "vector_add.cu")
    report = ptxrt.tune(problem, {"n": N}, budget=8, database=database)
    assert report["winner"] is not None and report["winner"]["status"] == "ok"
    assert len(report["results"]) == 8
    assert all(r["status"] == "ok" and r["median_ms"] > 0 for r in report["results"])
    tuned = ptxrt.TunedKernel(problem, {"n": N}, database=database)
    assert tuned.config == report["winner"]["config"]
    assert "exact" in tuned.choice
    a, b = rng.random(N, np.float32), rng.random(N, np.float32)
    c = cupy.full(N, cupy.nan, cupy.float32)
    tuned.launch(c, cupy.asarray(a), cupy.asarray(b), N)
    np.testing.assert_array_equal(c.get(), a + b)


def test_a_kernel_tuner_call_tunes_and_run_kernel_runs_one_config(private_cache, rng):
    size = 50_001
    a, b = rng.random(size, np.float32), rng.random(size, np.float32)
    args = [np.zeros_like(a), a, b, np.int32(size)]
    tune_params = {"block_size_x": [128, 256, 512], "tile_size_x": [1, 2]}
    results, env = kernel_tuner.tune_kernel(
        "vector_add", str(KERNEL_TUNER_SET / "vector_add.cu"), size, args, tune_params,
        grid_div_x=["block_size_x", "tile_size_x"], answer=[a + b, None, None, None],
        database=str(private_cache / "kt.json"))
    assert len(results) == 6
    assert {(r["block_size_x"], r["tile_size_x"]) for r in results} == {
        (x, t) for x in (128, 256, 512) for t in (1, 2)}
    assert min(r["time"] for r in results) == env["winner"]["median_ms"]
    assert env["device_name"] == ptxrt.Device(0).name
    wrong = [a, None, None, None]  # c = a + b is not a
    with pytest.warns(UserWarning, match="wrong result"):
        results, env = kernel_tuner.tune_kernel(
            "vector_add", str(KERNEL_TUNER_SET / "vector_add.cu"), size, args,
            {"block_size_x": [128]}, grid_div_x=["block_size_x", "tile_size_x"], answer=wrong,
            defines={"tile_size_x": 1}, database=str(private_cache / "kt.json"))
    assert results == [] and env["wrong_configs"] == [{"block_size_x": 128}]
    output = kernel_tuner.run_kernel("vector_add", str(KERNEL_TUNER_SET / "vector_add.cu"), size,
                                     args, {"block_size_x": 256, "tile_size_x": 2},
                                     grid_div_x=["block_size_x", "tile_size_x"])
    np.testing.assert_array_equal(output[0], a + b)
    assert output[3] == size


def test_a_kernel_tuner_script_runs_with_its_import_changed(private_cache, monkeypatch, tmp_path):
    script = KERNEL_TUNER_SET / "kt_vector_add.py"
    text = script.read_text()
    assert "from kernel_tuner import tune_kernel" in text
    changed = text.replace("from kernel_tuner import tune_kernel",
                           "from ptxrt.kernel_tuner import tune_kernel")
    monkeypatch.setenv("PTXRT_TUNING_DB", str(private_cache / "script.json"))
    monkeypatch.setattr("sys.argv", [str(script), str(tmp_path / "kt_cache.json")])
    with pytest.warns(UserWarning, match="tuning database"):
        exec(compile(changed, str(script), "exec"), {"__file__": str(script), "__name__": "__main__"})
    recorded = json.loads((private_cache / "script.json").read_text())
    assert json.dumps(recorded).count('"median_ms"') >= 48  # the script's 48 configs, recorded


@pytest.mark.parametrize("example", ["saxpy.py", "kt_blur.py"])
def test_the_python_examples_run(example, private_cache):
    import os
    import subprocess
    import sys
    from conftest import REPOSITORY
    environment = dict(os.environ, PTXRT_TUNING_DB=str(private_cache / "examples.json"))
    result = subprocess.run([sys.executable, str(REPOSITORY / "examples" / "python" / example)],
                            capture_output=True, text=True, env=environment, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("max error 0" if example == "saxpy.py" else "48 configs on") in result.stdout


def test_ctrl_c_stops_a_tune_after_the_config_in_progress(private_cache):
    import os
    import signal
    import subprocess
    import sys
    import time
    database = private_cache / "interrupted.json"
    script = f"""
import sys, ptxrt
problem = ptxrt.Problem.from_file({str(KERNEL_TUNER_SET / "vector_add.json")!r},
                                  {str(KERNEL_TUNER_SET / "vector_add.cu")!r})
print("tuning", flush=True)
try:
    ptxrt.tune(problem, {{"n": {1 << 27}}}, strategy="exhaustive", database={str(database)!r})
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
"""
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    assert process.stdout.readline().strip() == "tuning"
    # Ctrl-C once the first config is recorded, however fast this machine compiles: at 2^27
    # elements, each config's verification keeps the other 47 well beyond the signal.
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline and not (
            database.exists() and '"median_ms"' in database.read_text()):
        time.sleep(0.05)
    assert process.poll() is None, "the tune ended before Ctrl-C"
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, err = process.communicate(timeout=120)
    assert process.returncode == 3, out + err
    assert time.monotonic() - started < 30  # the config in progress, not the other configs
    recorded = database.read_text().count('"median_ms"')
    assert 0 < recorded < 48  # what was timed before Ctrl-C stays recorded
