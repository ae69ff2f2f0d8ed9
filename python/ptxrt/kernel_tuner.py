"""Kernel Tuner's interface on ptxrt: a Kernel Tuner script runs with its import line changed,

    from ptxrt.kernel_tuner import tune_kernel      # was: from kernel_tuner import tune_kernel
    results, env = tune_kernel("vector_add", "vector_add.cu", size, args, tune_params, answer=answer)

tune_kernel() states the script's arguments as a ptxrt tuning problem (the problem file's fields:
docs/tuning.md) and tunes it with ptxrt.tune(): each config compiled in parallel, verified against
`answer` and timed in a worker process. What ptxrt cannot honour is refused, naming the argument,
never ignored: restrictions and metrics given as Python functions, a `verify` function, languages
other than CUDA. `iterations` is not needed (ptxrt times until the spread settles); the results
go to ptxrt's tuning database (`database=`, else $PTXRT_TUNING_DB or the cache folder's), not to
Kernel Tuner's `cache` file.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _ptxrt
from .arrays import to_device

__all__ = ["tune_kernel", "run_kernel"]

Expression = Union[int, str]
DEFAULT_BLOCK = {0: 256, 1: 1, 2: 1}
ELEMENT_TYPES = {
    "float32": "float", "float64": "double", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
}
CUDA_LANGUAGES = {None, "cuda", "cupy", "nvcuda"}
STRATEGIES = {None: "exhaustive", "brute_force": "exhaustive", "random_sample": "random"}


def element_type(dtype: np.dtype, who: str) -> str:
    name = ELEMENT_TYPES.get(np.dtype(dtype).name)
    if name is None:
        raise TypeError(f"{who}: dtype {np.dtype(dtype)} has no ptxrt element type "
                        f"({', '.join(ELEMENT_TYPES)})")
    return name


def as_list(value: Any) -> List[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def block_names(block_size_names: Optional[Sequence[str]]) -> List[str]:
    names = list(block_size_names or ["block_size_x", "block_size_y", "block_size_z"])
    if not 1 <= len(names) <= 3:
        raise ValueError(f"block_size_names: 1 to 3 names, not {len(names)}")
    return names


def check_language(lang: Optional[str]) -> None:
    if (lang.lower() if isinstance(lang, str) else lang) not in CUDA_LANGUAGES:
        raise NotImplementedError(f"lang={lang!r}: ptxrt compiles CUDA (lang 'CUDA', 'CuPy', 'NVCUDA')")


def expression_text(value: Any, who: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, str)):
        raise TypeError(f"{who}: {value!r} is neither an int nor an expression string")
    return str(value)


def write_array(directory: str, name: str, values: np.ndarray, dtype: np.dtype) -> str:
    path = os.path.join(directory, f"{name}.bin")
    np.ascontiguousarray(values, dtype=dtype).ravel().tofile(path)
    return path


def arguments_spec(arguments: Sequence[Any], answer: Optional[Sequence[Any]],
                   directory: str) -> Tuple[List[Dict[str, Any]], Dict[str, str]]:
    """The problem's arguments (arrays through files in `directory`) and the expected outputs."""
    if answer is not None and len(answer) != len(arguments):
        raise ValueError(f"answer has {len(answer)} entries for {len(arguments)} arguments")
    specs: List[Dict[str, Any]] = []
    expected: Dict[str, str] = {}
    for index, value in enumerate(arguments):
        name, who = f"arg{index}", f"arguments[{index}]"
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                value = value[()]
            else:
                kind = element_type(value.dtype, who)
                spec = {"name": name, "type": kind, "count": str(value.size), "role": "input",
                        "init": "file", "file": write_array(directory, name, value, value.dtype)}
                if answer is not None and answer[index] is not None:
                    spec["role"] = "input_output"
                    expected[name] = write_array(directory, f"{name}.expected",
                                                 np.asarray(answer[index]), value.dtype)
                specs.append(spec)
                continue
        if answer is not None and answer[index] is not None:
            raise ValueError(f"answer[{index}]: the argument is a scalar, which has no output")
        if isinstance(value, np.generic):
            number = value.item()
            specs.append({"name": name, "type": element_type(value.dtype, who), "value": number})
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{who}: a {type(value).__name__}; pass NumPy arrays and NumPy scalars")
        else:
            specs.append({"name": name, "type": "int32" if isinstance(value, int) else "float",
                          "value": value})
    return specs, expected


def geometry_spec(problem_size: Any, params: Mapping[str, Sequence[Any]],
                  block_size_names: Sequence[str], grid_divs: Sequence[Optional[Sequence[Any]]],
                  ) -> Dict[str, Any]:
    spec: Dict[str, Any] = {}
    extents = [expression_text(v, f"problem_size[{i}]") for i, v in enumerate(as_list(problem_size))]
    if not 1 <= len(extents) <= 3:
        raise ValueError(f"problem_size: 1 to 3 extents, not {len(extents)}")
    spec["problem_size"] = extents
    spec["block"] = [name if name in params else DEFAULT_BLOCK[axis]
                     for axis, name in enumerate(block_size_names)]
    for axis, divisors in zip("xyz", grid_divs):
        if divisors is not None:
            spec[f"grid_div_{axis}"] = [expression_text(d, f"grid_div_{axis}")
                                        for d in as_list(divisors)]
    return spec


def problem_spec(kernel_name: str, kernel_source: str, problem_size: Any, arguments: Sequence[Any],
                 tune_params: Mapping[str, Sequence[Any]], directory: str, *,
                 grid_divs: Sequence[Optional[Sequence[Any]]], restrictions: Any, answer: Any,
                 atol: float, block_size_names: Sequence[str], smem_args: Optional[Mapping[str, Any]],
                 cmem_args: Optional[Mapping[str, np.ndarray]], compiler_options: Optional[Sequence[str]],
                 defines: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    spec: Dict[str, Any] = {"name": kernel_name, "kernel": kernel_name,
                            "tune": {name: list(values) for name, values in tune_params.items()}}
    if not os.path.isfile(kernel_source):
        spec["source_text"] = kernel_source
        spec["source_name"] = f"{kernel_name}.cu"
    spec.update(geometry_spec(problem_size, tune_params, block_size_names, grid_divs))
    fixed = {name: DEFAULT_BLOCK[axis] for axis, name in enumerate(block_size_names)
             if name not in tune_params}
    for name, value in (defines or {}).items():
        if callable(value):
            raise NotImplementedError(f"defines[{name!r}] is a function: give its value or an expression")
        fixed[name] = expression_text(value, f"defines[{name!r}]")
    if fixed:
        spec["defines"] = fixed
    if restrictions is not None:
        if callable(restrictions) or any(callable(r) for r in as_list(restrictions)):
            raise NotImplementedError(
                "restrictions given as a Python function cannot reach ptxrt's workers: write each "
                "as a string expression, in Python's syntax ('block_size_x * tile_size_x <= 1024')")
        spec["constraints"] = [str(r) for r in as_list(restrictions)]
    spec["arguments"], expected = arguments_spec(arguments, answer, directory)
    if expected:
        spec["verify"] = {"files": expected, "atol": atol, "rtol": 1e-5}
    if smem_args:
        spec["shared_memory"] = expression_text(smem_args.get("size", 0), "smem_args['size']")
    if cmem_args:
        spec["symbols"] = [
            {"name": name, "type": element_type(np.asarray(values).dtype, f"cmem_args[{name!r}]"),
             "count": str(np.asarray(values).size), "init": "file",
             "file": write_array(directory, f"cmem_{name}", np.asarray(values), np.asarray(values).dtype)}
            for name, values in cmem_args.items()]
    if compiler_options:
        spec["compile_options"] = list(compiler_options)
    return spec


def strategy_and_budget(strategy: Optional[str], options: Optional[Mapping[str, Any]],
                        space_size: int) -> Tuple[str, Optional[int]]:
    options = dict(options or {})
    name = STRATEGIES.get(strategy, "model")
    budget = options.get("max_fevals")
    if budget is None and "fraction" in options:
        budget = max(1, int(round(float(options["fraction"]) * space_size)))
    if name != "exhaustive" and budget is None:
        budget = min(space_size, 100)
    return name, None if budget is None else int(budget)


def result_rows(report: Mapping[str, Any], tune_params: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    boolean = {name for name, values in tune_params.items()
               if values and all(isinstance(v, (bool, np.bool_)) for v in values)}
    rows = []
    for measured in report["results"]:
        if measured.get("status") not in ("ok", "cut"):  # cut: verified, then left as clearly slower
            continue
        row: Dict[str, Any] = {}
        for name in tune_params:
            value = measured["config"].get(name)
            row[name] = bool(value) if name in boolean else value
        row["time"] = measured["median_ms"]
        row.update({key: measured[key] for key in ("spread", "runs", "status") if key in measured})
        row.update(measured.get("metrics", {}))
        rows.append(row)
    return rows


def tune_kernel(kernel_name: str, kernel_source: str, problem_size: Any, arguments: Sequence[Any],
                tune_params: Mapping[str, Sequence[Any]], grid_div_x: Optional[Sequence[Any]] = None,
                grid_div_y: Optional[Sequence[Any]] = None, grid_div_z: Optional[Sequence[Any]] = None,
                restrictions: Any = None, answer: Optional[Sequence[Any]] = None, atol: float = 1e-6,
                verify: Optional[Callable[..., bool]] = None, verbose: bool = False, lang: Optional[str] = None,
                device: int = 0, platform: int = 0, smem_args: Optional[Mapping[str, Any]] = None,
                cmem_args: Optional[Mapping[str, np.ndarray]] = None, texmem_args: Any = None,
                compiler: Optional[str] = None, compiler_options: Optional[Sequence[str]] = None,
                defines: Optional[Mapping[str, Any]] = None, log: Any = None, iterations: int = 7,
                block_size_names: Optional[Sequence[str]] = None, quiet: bool = False,
                strategy: Optional[str] = None, strategy_options: Optional[Mapping[str, Any]] = None,
                cache: Optional[str] = None, metrics: Any = None, simulation_mode: bool = False,
                observers: Any = None, objective: Optional[str] = None,
                objective_higher_is_better: Optional[bool] = None,
                database: Optional[str] = None, l2: str = "warm",
                ) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Tunes like Kernel Tuner's tune_kernel and returns (results, env) as it does: one dict per
    config that verified and timed (its tunables, 'time' in ms, and ptxrt's 'spread', 'runs',
    'status'), and what the tune ran on. Brute force ('brute_force' or no strategy) is ptxrt's
    exhaustive tune; 'random_sample' its random one; any other strategy its model strategy with
    strategy_options['max_fevals'] (or 'fraction' of the space) as the budget. Configs are timed
    with the L2 warm, as Kernel Tuner times them (l2='flush' for ptxrt's default)."""
    check_language(lang)
    refused = {"verify": verify, "metrics": metrics, "observers": observers, "texmem_args": texmem_args,
               "simulation_mode": simulation_mode or None}
    for name, value in refused.items():
        if value is not None:
            raise NotImplementedError(
                f"tune_kernel: {name}= has no ptxrt form here; use ptxrt.tune() with a problem "
                "(its 'verify' takes aggregates and check kernels, its 'metrics' expressions)")
    if objective not in (None, "time"):
        raise NotImplementedError(f"objective={objective!r}: tune_kernel tunes for time; "
                                  "ptxrt.tune() takes objective='energy', 'power' or a metric")
    if cache is not None and not quiet:
        warnings.warn(f"tune_kernel: ptxrt records its results in its tuning database, not in "
                      f"Kernel Tuner's cache file {cache!r}", stacklevel=2)
    directory = tempfile.mkdtemp(prefix="ptxrt-tune-kernel-")
    try:
        spec = problem_spec(
            kernel_name, kernel_source, problem_size, arguments, tune_params, directory,
            grid_divs=(grid_div_x, grid_div_y, grid_div_z), restrictions=restrictions, answer=answer,
            atol=atol, block_size_names=block_names(block_size_names), smem_args=smem_args,
            cmem_args=cmem_args, compiler_options=compiler_options, defines=defines)
        kernel_file = kernel_source if os.path.isfile(kernel_source) else None
        problem = _ptxrt.Problem(spec, kernel_file, directory)
        name, budget = strategy_and_budget(strategy, strategy_options, problem.space_size())
        report = _ptxrt.tune(problem, strategy=name, budget=budget, devices=[device],
                             database=database, l2=l2)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    properties = _ptxrt.Device(device).properties
    env = {"device_name": properties["name"], "compute_capability": properties["compute_capability"],
           "driver_version": properties["driver_version"], "nvrtc_version": _ptxrt.nvrtc_version(),
           "problem_size": problem_size, "strategy": name, "budget": budget, "l2": l2,
           "key": report["key"], "winner": report["winner"], "wall_seconds": report["wall_seconds"],
           "wrong_configs": [r["config"] for r in report["results"] if r.get("status") == "wrong"]}
    if env["wrong_configs"] and not quiet:
        warnings.warn(f"tune_kernel: {len(env['wrong_configs'])} config(s) computed a wrong result "
                      f"(env['wrong_configs']); none of them is in the results", stacklevel=2)
    if verbose and report["winner"] is not None and not quiet:
        print(f"best: {report['winner']['config']} {report['winner']['median_ms']:.4f} ms")
    return result_rows(report, tune_params), env


def grid_of(problem_size: Any, params: Mapping[str, Any], names: Sequence[str],
            grid_divs: Sequence[Optional[Sequence[Any]]]) -> Tuple[int, ...]:
    def value(expression: Any) -> int:
        if isinstance(expression, str):
            return int(eval(expression, {"__builtins__": {}}, dict(params)))  # the script's own text
        return int(expression)

    grid = []
    for axis, extent in enumerate(as_list(problem_size)):
        divisors = grid_divs[axis]
        if divisors is None:
            divisors = [names[axis]] if names[axis] in params else [DEFAULT_BLOCK[axis]]
        product = 1
        for divisor in as_list(divisors):
            product *= value(divisor)
        grid.append(-(-value(extent) // product))
    return tuple(grid)


def run_kernel(kernel_name: str, kernel_source: str, problem_size: Any, arguments: Sequence[Any],
               params: Mapping[str, Any], grid_div_x: Optional[Sequence[Any]] = None,
               grid_div_y: Optional[Sequence[Any]] = None, grid_div_z: Optional[Sequence[Any]] = None,
               lang: Optional[str] = None, device: int = 0, platform: int = 0,
               smem_args: Optional[Mapping[str, Any]] = None,
               cmem_args: Optional[Mapping[str, np.ndarray]] = None, texmem_args: Any = None,
               compiler: Optional[str] = None, compiler_options: Optional[Sequence[str]] = None,
               defines: Optional[Mapping[str, Any]] = None, block_size_names: Optional[Sequence[str]] = None,
               quiet: bool = False, log: Any = None) -> List[Any]:
    """Runs one config once, as Kernel Tuner's run_kernel: every array goes to the GPU, the kernel
    runs, and the arguments come back in order (arrays as NumPy arrays, scalars as given)."""
    check_language(lang)
    if texmem_args is not None:
        raise NotImplementedError("run_kernel: texmem_args= has no ptxrt form")
    names = block_names(block_size_names)
    values = {name: int(v) if isinstance(v, (bool, np.bool_)) else v for name, v in params.items()}
    all_defines: Dict[str, Any] = {name: DEFAULT_BLOCK[axis] for axis, name in enumerate(names)}
    all_defines.update(values)
    all_defines.update(defines or {})
    program = (_ptxrt.Program.from_file(kernel_source) if os.path.isfile(kernel_source)
               else _ptxrt.Program(kernel_source, f"{kernel_name}.cu"))
    context = _ptxrt.Context.primary(device)
    module = _ptxrt.Jit.shared().module(program, context=context, defines=all_defines,
                                       options=list(compiler_options or []),
                                       name_expressions=[kernel_name])
    kernel = module.kernel(kernel_name)
    for name, host in (cmem_args or {}).items():
        module.symbol(name).set(np.ascontiguousarray(host).reshape(-1).view(np.uint8))
    block = tuple(int(all_defines[name]) for name in names)
    grid = grid_of(problem_size, all_defines, names, (grid_div_x, grid_div_y, grid_div_z))
    device_arguments = [to_device(a, context) if isinstance(a, np.ndarray) and a.ndim > 0 else a
                        for a in arguments]
    shared = smem_args.get("size", 0) if smem_args else 0
    kernel.launch(grid, block, tuple(device_arguments), shared_bytes=int(shared))
    context.synchronize()
    return [a.to_numpy().reshape(np.shape(host)) if hasattr(a, "to_numpy") else a
            for a, host in zip(device_arguments, arguments)]
