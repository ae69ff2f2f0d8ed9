"""Compiling, images and their resource reports, and errors: no GPU needed."""
import numpy as np
import pytest

import ptxrt

SCALE = r'''
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a * FACTOR;
}
'''


def test_a_compile_for_a_named_architecture_gives_a_cubin_with_its_defines():
    image = ptxrt.compile(ptxrt.Program(SCALE), arch="sm_90", defines={"FACTOR": 2})
    assert image.format == "cubin"
    assert image.arch == "sm_90"
    assert image.defines == {"FACTOR": "2"}
    assert "-DFACTOR=2" in image.options
    assert image.data[:4] == b"\x7fELF"


def test_defines_as_a_list_and_booleans_as_one_and_zero():
    image = ptxrt.compile(ptxrt.Program(SCALE.replace("FACTOR", "(FACTOR + FLAG)")), arch="sm_80",
                          defines=["FACTOR=3", "FLAG"])
    assert image.defines == {"FACTOR": "3", "FLAG": ""}
    image = ptxrt.compile(ptxrt.Program(SCALE), arch="sm_80", defines={"FACTOR": True})
    assert image.defines == {"FACTOR": "1"}


def test_ptx_comes_back_as_text():
    image = ptxrt.compile(ptxrt.Program(SCALE), arch="compute_90", format="ptx", defines={"FACTOR": 1})
    assert image.format == "ptx"
    assert b".entry scale" in image.data


def test_resources_name_each_kernel_with_its_registers_and_occupancy_per_block_size():
    image = ptxrt.compile(ptxrt.Program(SCALE), arch="sm_90", defines={"FACTOR": 1})
    (kernel,) = image.resources([128, 1024])
    assert kernel["name"] == "scale"
    assert 1 <= kernel["registers"] <= 32
    assert kernel["param_bytes"] == 16  # a pointer, a float, an int
    assert [o["block_threads"] for o in kernel["occupancy"]] == [128, 1024]
    assert kernel["occupancy"][0]["active_warps_per_sm"] == 64  # the H100's whole SM
    assert kernel["occupancy"][1]["active_blocks_per_sm"] == 2


def test_occupancy_reads_the_shared_memory_a_kernel_declares():
    source = r'''extern "C" __global__ void tile(float* x) {
      __shared__ float t[12288]; t[threadIdx.x] = x[threadIdx.x]; __syncthreads();
      x[threadIdx.x] = t[blockDim.x - 1 - threadIdx.x]; }'''
    (kernel,) = ptxrt.compile(ptxrt.Program(source), arch="sm_90").resources([256])
    assert kernel["static_shared_bytes"] == 12288 * 4
    occupancy = kernel["occupancy"][0]
    assert occupancy["limit"] == "shared_memory"
    assert occupancy["active_blocks_per_sm"] == 4  # 228 KiB / (48 KiB + 1 KiB reserved)


def test_a_compile_error_raises_one_type_with_the_diagnostics_and_the_defines():
    with pytest.raises(ptxrt.Error) as raised:
        ptxrt.compile(ptxrt.Program("__global__ void k() { undeclared; }", "broken.cu"),
                      arch="sm_90", defines={"TILE": 16})
    error = raised.value
    assert isinstance(error, RuntimeError)
    assert error.kind == "compile"
    assert "broken.cu(1)" in str(error) and "undeclared" in str(error)
    assert "TILE=16" in str(error)


def test_an_unknown_format_is_refused_naming_the_choices():
    with pytest.raises(ptxrt.Error, match="'cubin', 'ptx', 'fatbin', 'ltoir'") as raised:
        ptxrt.compile(ptxrt.Program(SCALE), arch="sm_90", format="elf")
    assert raised.value.kind == "invalid_argument"


def test_a_missing_file_is_an_error_of_kind_io_or_not_found(tmp_path):
    with pytest.raises(ptxrt.Error) as raised:
        ptxrt.Program.from_file(tmp_path / "absent.cu")
    assert raised.value.kind in ("io", "not_found")
    assert "absent.cu" in str(raised.value)


def test_quoted_includes_come_from_added_headers_and_the_file_folder(tmp_path):
    (tmp_path / "factor.h").write_text("#define FACTOR 5\n")
    (tmp_path / "k.cu").write_text('#include "factor.h"\n#include "limits.h"\n' + SCALE)
    program = ptxrt.Program.from_file(tmp_path / "k.cu").add_header("limits.h", "#define LIMIT 4\n")
    assert ptxrt.compile(program, arch="sm_90").resources()[0]["name"] == "scale"


def test_the_jit_caches_in_memory_and_counts_it(private_cache):
    jit = ptxrt.Jit(cache_directory=private_cache / "jit")
    program = ptxrt.Program(SCALE)
    first = jit.image(program, arch="sm_90", defines={"FACTOR": 7})
    again = jit.image(program, arch="sm_90", defines={"FACTOR": 7})
    assert first.key == again.key and first.data == again.data
    stats = jit.stats()
    assert stats["compiles"] == 1 and stats["image_memory_hits"] == 1


def test_threads_compile_at_once_with_the_gil_released(private_cache):
    from concurrent.futures import ThreadPoolExecutor
    program = ptxrt.Program(SCALE)
    jit = ptxrt.Jit(cache_directory=private_cache / "threads")
    with ThreadPoolExecutor(4) as pool:
        images = list(pool.map(lambda f: jit.image(program, arch="sm_90", defines={"FACTOR": f}),
                               range(8)))
    assert sorted(image.defines["FACTOR"] for image in images) == [str(f) for f in range(8)]
    assert jit.stats()["compiles"] == 8


def test_nvrtc_is_known_without_a_gpu():
    assert ptxrt.nvrtc_version() >= 12000
    assert 90 in ptxrt.supported_architectures()


def test_blocks_for_rounds_up():
    assert ptxrt.blocks_for(1000, 256) == 4
    assert ptxrt.blocks_for(1024, 256) == 4
    with pytest.raises(ValueError):
        ptxrt.blocks_for(10, 0)


def test_without_a_driver_device_calls_raise_no_driver():
    from conftest import HAS_GPU
    if HAS_GPU:
        pytest.skip("a driver is present")
    with pytest.raises(ptxrt.Error) as raised:
        ptxrt.device_count()
    assert raised.value.kind == "no_driver"
    with pytest.raises(ptxrt.Error):
        ptxrt.DeviceArray(16, np.float32)


def test_several_sources_link_into_one_image(tmp_path):
    (tmp_path / "main.cu").write_text(
        '__device__ float twice(float x);\n'
        'extern "C" __global__ void apply(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n')
    (tmp_path / "math.cu").write_text("__device__ float twice(float x) { return 2.0f * x; }\n")
    program = ptxrt.Program.from_files([tmp_path / "main.cu", tmp_path / "math.cu"])
    assert program.is_linked
    (kernel,) = ptxrt.compile(program, arch="sm_90").resources()
    assert kernel["name"] == "apply"


def test_a_device_object_from_bytes_links(tmp_path):
    math = ptxrt.compile(ptxrt.Program('extern "C" __device__ float twice(float x) { return 2 * x; }',
                                       "math.cu"), arch="sm_90", options=["-rdc=true"])
    caller = ('extern "C" __device__ float twice(float x);\n'
              'extern "C" __global__ void apply(float* x) { x[0] = twice(x[0]); }\n')
    linked = ptxrt.Program(caller, "main.cu").add_device_object(math.data, "math.cubin")
    assert ptxrt.compile(linked, arch="sm_90").resources()[0]["name"] == "apply"


def test_an_undefined_symbol_is_a_link_error_naming_it():
    # In a process of its own: a crash in the link fails this test alone.
    import subprocess
    import sys
    script = (
        "import ptxrt\n"
        "caller = ('extern \"C\" __device__ float twice(float x);\\n'\n"
        "          'extern \"C\" __global__ void apply(float* x) { x[0] = twice(x[0]); }\\n')\n"
        "program = ptxrt.Program(caller, 'main.cu').add_source('// nothing\\n', 'empty.cu')\n"
        "try:\n"
        "    ptxrt.compile(program, arch='sm_90')\n"
        "except ptxrt.Error as error:\n"
        "    print(error.kind, 'twice' in str(error))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr}"
    assert result.stdout.split() == ["link", "True"]
