#!/usr/bin/env python3
"""The number of configs a Kernel Tuner script of this folder tunes: the product of its
tune_params after its restrictions, each evaluated as Python on the config, as Kernel Tuner's
brute force does. Reads the script without running it (no numpy, no GPU): its module-level
constants, `tune_params[...] = ...` and `restrictions = [...]`.

    space_size.py kt_matmul.py [...]   # prints "kt_matmul.py 168" per script
"""
import ast
import itertools
import sys


def space_size(path):
    tree = ast.parse(open(path).read(), path)
    constants, tune_params, restrictions = {}, {}, []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        try:
            value = eval(compile(ast.Expression(statement.value), path, "eval"), {}, constants)
        except Exception:  # data made with numpy: not part of the space
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name):
                constants[target.id] = value
                if target.id == "restrictions":
                    restrictions = value
            elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                  and target.value.id == "tune_params"):
                tune_params[ast.literal_eval(target.slice)] = value
    names = list(tune_params)
    return sum(1 for values in itertools.product(*tune_params.values())
               if all(eval(restriction, {}, dict(zip(names, values)))
                      for restriction in restrictions))


if __name__ == "__main__":
    for script in sys.argv[1:]:
        print(script, space_size(script))
