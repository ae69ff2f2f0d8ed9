"""Tuning problems from dicts, their errors, dry-run plans and Kernel Tuner's arguments as a
problem: no GPU needed."""
import json

import numpy as np
import pytest

import ptxrt
from ptxrt import kernel_tuner
from conftest import KERNEL_TUNER_SET

VECTOR_ADD = KERNEL_TUNER_SET / "vector_add.cu"


def vector_add_spec():
    return json.loads((KERNEL_TUNER_SET / "vector_add.json").read_text())


def test_a_problem_from_a_dict_is_the_problem_file_it_states():
    problem = ptxrt.Problem(vector_add_spec(), VECTOR_ADD)
    assert problem.name == "kt_vector_add"
    assert problem.sizes == [("n", 16777216)]
    assert problem.tunables["tile_size_x"] == [1, 2, 4]
    assert problem.space_size() == 48
    assert problem.default_config() == {"block_size_x": 256, "tile_size_x": 1}
    again = ptxrt.Problem(problem.to_dict())
    assert again.space_size({"n": 1000}) == 48


def test_a_constraint_in_python_syntax_prunes_as_written():
    spec = vector_add_spec()
    spec["constraints"] = ["block_size_x * tile_size_x <= 1024 and not tile_size_x == 4"]
    assert ptxrt.Problem(spec, VECTOR_ADD).space_size() == 16 + 8  # tile 1: all; tile 2: up to 512


@pytest.mark.parametrize("field, value, expected", [
    ("constraints", ["block_size_x ==== 2"], r"constraints\[0\].*column 16"),
    ("block", ["block_size_q"], "block_size_q"),
    ("tune", {"block_size_x": "many"}, "tune"),
    ("arguments", [{"name": "c", "type": "float16", "count": "n"}], "float16"),
])
def test_a_wrong_field_is_refused_naming_it(field, value, expected):
    spec = vector_add_spec()
    spec[field] = value
    with pytest.raises(ptxrt.Error, match=expected) as raised:
        ptxrt.Problem(spec, VECTOR_ADD)
    assert raised.value.kind == "invalid_argument"


def test_a_problem_is_a_dict_or_json_text():
    with pytest.raises(ptxrt.Error, match="a dict"):
        ptxrt.Problem(["not", "a", "problem"], VECTOR_ADD)
    with pytest.raises(ptxrt.Error, match="not valid JSON"):
        ptxrt.Problem("{not json", VECTOR_ADD)


def test_a_dry_run_plans_without_a_gpu(private_cache):
    spec = vector_add_spec()
    spec["constraints"] = ["block_size_x <= 256"]
    plan = ptxrt.plan(ptxrt.Problem(spec, VECTOR_ADD), {"n": 4096}, arch="sm_90")
    assert plan["space_size"] == 48
    assert len(plan["pruned_by_constraints"]) == 36
    assert "block_size_x <= 256" in plan["pruned_by_constraints"][0]["reason"]
    assert len(plan["ready"]) == 12
    first = plan["ready"][0]
    assert first["resources"]["registers"] > 0
    assert first["occupancy"]["block_threads"] == first["config"]["block_size_x"]


def test_a_plan_finds_an_entry_the_file_lacks(private_cache):
    spec = vector_add_spec()
    spec["kernel"] = "vector_sub"
    with pytest.raises(ptxrt.Error, match="vector_sub") as raised:
        ptxrt.plan(ptxrt.Problem(spec, VECTOR_ADD), arch="sm_90")
    assert raised.value.kind == "not_found"


def test_a_plan_needs_a_real_architecture():
    with pytest.raises(ptxrt.Error, match="compute_90"):
        ptxrt.plan(ptxrt.Problem(vector_add_spec(), VECTOR_ADD), arch="compute_90")


def kernel_tuner_spec(tmp_path, **options):
    size = 10_000
    a = np.random.default_rng(1).random(size, dtype=np.float32)
    b = np.random.default_rng(2).random(size, dtype=np.float32)
    args = [np.zeros_like(a), a, b, np.int32(size)]
    tune_params = {"block_size_x": [64, 128, 256], "tile_size_x": [1, 2, 4]}
    settings = dict(grid_divs=(["block_size_x", "tile_size_x"], None, None), restrictions=None,
                    answer=[a + b, None, None, None], atol=1e-6,
                    block_size_names=kernel_tuner.block_names(None), smem_args=None,
                    cmem_args=None, compiler_options=None, defines=None)
    settings.update(options)
    return kernel_tuner.problem_spec("vector_add", str(VECTOR_ADD), size, args, tune_params,
                                     str(tmp_path), **settings), a, b


def test_kernel_tuner_arguments_become_a_problem_with_files_for_arrays(tmp_path):
    spec, a, b = kernel_tuner_spec(tmp_path, restrictions=["block_size_x * tile_size_x <= 512"])
    assert spec["problem_size"] == ["10000"]
    assert spec["block"] == ["block_size_x", 1, 1]
    assert spec["grid_div_x"] == ["block_size_x", "tile_size_x"]
    assert spec["constraints"] == ["block_size_x * tile_size_x <= 512"]
    output, first, _, n = spec["arguments"]
    assert output["role"] == "input_output" and first["role"] == "input"
    np.testing.assert_array_equal(np.fromfile(first["file"], np.float32), a)
    np.testing.assert_array_equal(np.fromfile(spec["verify"]["files"]["arg0"], np.float32), a + b)
    assert n == {"name": "arg3", "type": "int32", "value": 10000}
    problem = ptxrt.Problem(spec, str(VECTOR_ADD), str(tmp_path))
    assert problem.space_size() == 8  # 256 x 4 is out


def test_kernel_tuner_arguments_plan_as_ptxrt_problems(tmp_path, private_cache):
    spec, _, _ = kernel_tuner_spec(tmp_path)
    plan = ptxrt.plan(ptxrt.Problem(spec, str(VECTOR_ADD), str(tmp_path)), arch="sm_90")
    assert len(plan["ready"]) == 9


def test_kernel_tuner_functions_are_refused_not_ignored(tmp_path):
    with pytest.raises(NotImplementedError, match="string expression"):
        kernel_tuner_spec(tmp_path, restrictions=lambda p: p["block_size_x"] > 64)
    with pytest.raises(NotImplementedError, match="verify="):
        kernel_tuner.tune_kernel("vector_add", str(VECTOR_ADD), 100, [np.int32(1)],
                                 {"block_size_x": [64]}, verify=lambda *a: True)
    with pytest.raises(NotImplementedError, match="lang="):
        kernel_tuner.tune_kernel("vector_add", str(VECTOR_ADD), 100, [np.int32(1)],
                                 {"block_size_x": [64]}, lang="OpenCL")
    with pytest.raises(TypeError, match="float16"):
        kernel_tuner_spec(tmp_path, cmem_args={"f": np.zeros(4, np.float16)})


def test_a_kernel_tuner_block_name_that_is_not_tuned_is_defined_as_its_default(tmp_path):
    spec, _, _ = kernel_tuner_spec(tmp_path, block_size_names=["bx", "by"])
    assert spec["block"] == [256, 1]
    assert spec["defines"] == {"bx": 256, "by": 1}


def test_strategies_map_onto_ptxrts_with_their_budgets():
    assert kernel_tuner.strategy_and_budget(None, None, 500) == ("exhaustive", None)
    assert kernel_tuner.strategy_and_budget("random_sample", {"fraction": 0.1}, 500) == ("random", 50)
    assert kernel_tuner.strategy_and_budget("genetic_algorithm", {"max_fevals": 30}, 500) == ("model", 30)
    assert kernel_tuner.strategy_and_budget("bayes_opt", None, 40) == ("model", 40)


def test_grids_follow_kernel_tuners_divisors():
    params = {"block_size_x": 128, "tile_size_x": 2, "block_size_y": 4}
    names = ["block_size_x", "block_size_y", "block_size_z"]
    assert kernel_tuner.grid_of(1000, params, names, (None, None, None)) == (8,)
    assert kernel_tuner.grid_of((1000, 9), params, names,
                                (["block_size_x", "tile_size_x"], None, None)) == (4, 3)
    assert kernel_tuner.grid_of("block_size_x * 3", params, names, ([], None, None)) == (384,)


def test_a_tune_without_a_driver_raises_no_driver_from_its_thread(private_cache):
    from conftest import HAS_GPU
    if HAS_GPU:
        pytest.skip("a driver is present")
    with pytest.raises(ptxrt.Error) as raised:
        ptxrt.tune(ptxrt.Problem(vector_add_spec(), VECTOR_ADD), database=private_cache / "db.json")
    assert raised.value.kind == "no_driver"


def test_a_tune_refuses_an_unknown_strategy_before_it_starts(private_cache):
    with pytest.raises(ptxrt.Error, match="exhaustive") as raised:
        ptxrt.tune(ptxrt.Problem(vector_add_spec(), VECTOR_ADD), strategy="annealing",
                   database=private_cache / "db.json")
    assert raised.value.kind == "invalid_argument"
