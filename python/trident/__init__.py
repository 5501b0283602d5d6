"""trident from Python: simulate one training step of a transformer on a GPU cluster.

    import trident
    r = trident.simulate("llama3-70b-dgx-h100", sets={"cluster": "hgx-b200"})
    r["step_time_s"], r["mfu"]
    rows = trident.sweep("llama3-70b-dgx-h100", vary={"plan.micro_batch_size": [1, 2]}, jobs=2)
    plans = trident.plan(cluster="dgx-h100", model="llama3-8b", nodes=1, seq=4096,
                         global_batch=128, top=3)

Scenarios, clusters and models are paths or library names (`trident list`). Every
simulation runs in its own child process, as the command line does (SimGrid runs one engine
per process). Bad input raises trident.ConfigError (file, line, column, key, message).
"""

import csv
import io
import numbers
import os
import subprocess


class ConfigError(ValueError):
    """Bad input: `file`, `line`, `column` (0 when unknown), `key` (dotted path), `message`."""

    def __init__(self, text, file="", line=0, column=0, key="", message=""):
        super().__init__(text)
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message or text


from . import _trident  # noqa: E402  (needs ConfigError defined)

__all__ = ["ConfigError", "simulate", "sweep", "compare", "plan", "validate", "binary",
           "metrics"]


def binary():
    """The trident executable that sweep, compare and `python3 -m trident` run:
    $TRIDENT_BINARY, else the installed one next to this package
    (<prefix>/lib/python3/dist-packages/trident -> <prefix>/bin/trident), else the one this
    module was built with."""
    if os.environ.get("TRIDENT_BINARY"):
        return os.environ["TRIDENT_BINARY"]
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.normpath(os.path.join(here, "..", "..", "..", "..", "bin", "trident"))
    if os.access(installed, os.X_OK):
        return installed
    return _trident.TRIDENT_BINARY


def metrics():
    """The report's keys, in the order of `trident simulate --format json`, as dicts with
    key, unit, doc and csv (whether sweep and compare CSV rows have it too): the one table
    that every command writes and reads (docs/report.md)."""
    return list(_trident.report_metrics())


def _type_name(value):
    return "None" if value is None else type(value).__name__


def _path_arg(value, function, name="scenario"):
    """A path or library name argument as text; TypeError naming `name` for anything else
    (None is not looked up as the name "None")."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise TypeError("trident.%s: %s must be a path or library name (str or os.PathLike), not %s"
                    % (function, name, _type_name(value)))


def _text_arg(value, function, name):
    if isinstance(value, str):
        return value
    raise TypeError("trident.%s: %s must be a str, not %s" % (function, name, _type_name(value)))


def _set_list(sets, function="simulate", name="sets"):
    """{"plan.tensor_parallel": 4} or ["plan.tensor_parallel=4"] -> ["plan.tensor_parallel=4"];
    TypeError naming `name` for anything else."""
    if sets is None:
        return []
    if isinstance(sets, dict):
        for key in sets:
            if not isinstance(key, str):
                raise TypeError("trident.%s: the keys of %s must be dotted setting names (str), "
                                "not %s" % (function, name, _type_name(key)))
        return ["%s=%s" % (k, _value_text(v)) for k, v in sets.items()]
    if isinstance(sets, (list, tuple)) and all(isinstance(s, str) for s in sets):
        return list(sets)
    raise TypeError("trident.%s: %s must be a dict {\"plan.tensor_parallel\": 4} or a list of "
                    "\"key=value\" strings, not %s" % (function, name, _type_name(sets)))


def _value_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    return str(value)


def simulate(scenario, sets=None, fidelity="fast"):
    """Simulates one step of `scenario` (a path or a library name) with `sets` applied
    ({"plan.tensor_parallel": 4, "cluster": "hgx-b200"}). Returns the report as a dict with
    the keys of `trident simulate --format json`."""
    import json

    path = _path_arg(scenario, "simulate")
    fidelity = _text_arg(fidelity, "simulate", "fidelity")
    return json.loads(_trident.simulate_json(path, _set_list(sets), fidelity))


def validate(path, sets=None):
    """Checks a scenario, cluster, GPU, model or plan file (or library name) without
    simulating. Returns its kind ("scenario", "cluster", ...); raises ConfigError."""
    return _trident.validate(_path_arg(path, "validate", "path"), _set_list(sets, "validate"))


def _number(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def _rows(dict_rows):
    try:
        import pandas
    except ImportError:
        return dict_rows
    return pandas.DataFrame(dict_rows)


def _run_cli(args):
    proc = subprocess.run([binary()] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode == 2:
        raise ConfigError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                          "bad input")
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or "trident exited with %d" % proc.returncode)
    return proc.stdout


# The most points one sweep may have (`trident sweep` counts them before any runs).
MAX_SWEEP_POINTS = 100000


def _vary_args(vary, function):
    """--vary arguments for {key: value or [values]}; TypeError for a vary that is not such a
    dict, ValueError past MAX_SWEEP_POINTS or past what one command-line argument holds."""
    if vary is None:
        return []
    if not isinstance(vary, dict):
        raise TypeError("trident.%s: vary must be a dict {\"plan.micro_batch_size\": [1, 2]}, "
                        "not %s" % (function, _type_name(vary)))
    args = []
    points = 1
    for key, values in vary.items():
        if not isinstance(key, str):
            raise TypeError("trident.%s: the keys of vary must be dotted setting names (str), "
                            "not %s" % (function, _type_name(key)))
        if not isinstance(values, (list, tuple, range)):
            values = [values]
        points *= max(1, len(values))
        if points > MAX_SWEEP_POINTS:
            raise ValueError("trident.%s: vary gives more than %d points (the limit of one "
                             "sweep; %s alone has %d values)"
                             % (function, MAX_SWEEP_POINTS, key, len(values)))
        arg = "%s=%s" % (key, ",".join(_value_text(v) for v in values))
        # Linux refuses one argument past 128 KiB (MAX_ARG_STRLEN) with E2BIG.
        if len(arg.encode()) >= 128 * 1024:
            raise ValueError("trident.%s: the %d values of %s take %d bytes, more than one "
                             "command-line argument holds (131072); vary fewer values"
                             % (function, len(values), key, len(arg.encode())))
        args += ["--vary", arg]
    return args


def sweep(scenario, vary=None, sets=None, jobs=None):
    """Simulates every point of `vary` ({"plan.micro_batch_size": [1, 2, 4], "cluster":
    ["dgx-h100", "hgx-b200"]}) crossed with the scenario's own `sweep:`, each point in a
    child process, `jobs` at a time. Returns the rows of `trident sweep` (a pandas DataFrame
    when pandas is importable, else a list of dicts); a failed point has status "error"."""
    path = _path_arg(scenario, "sweep")
    vary_args = _vary_args(vary, "sweep")  # before any process starts
    validate(path, sets)  # bad input raises ConfigError with its location
    args = ["sweep", path] + vary_args
    for s in _set_list(sets, "sweep"):
        args += ["--set", s]
    if jobs:
        args += ["--jobs", str(int(jobs))]
    reader = csv.DictReader(io.StringIO(_run_cli(args)))
    return _rows([{k: _number(v) for k, v in row.items()} for row in reader])


def compare(scenario, variants, sets=None, jobs=None, fidelity=None):
    """Simulates `variants` ({"h100": {"cluster": "dgx-h100"}, "b200": {"cluster":
    "hgx-b200"}}; the first is the baseline) of `scenario` as `trident compare` does, each in
    its own child, `jobs` at a time. Returns one row per variant with the keys of
    `trident compare --format json` (name, overrides, status, the report's keys, the exposed
    communication shares, step_time_ratio): a DataFrame when pandas is importable."""
    import json

    path = _path_arg(scenario, "compare")
    if not isinstance(variants, dict):
        raise TypeError("trident.compare: variants must be a dict {name: sets}, not %s"
                        % _type_name(variants))
    variant_args = []
    for name, variant_sets in variants.items():
        name = _text_arg(name, "compare", "a variant's name")
        listed = _set_list(variant_sets, "compare", "variant %r" % name)
        variant_args += ["--variant", "%s:%s" % (name, ",".join(listed))]
    validate(path, sets)  # bad input raises ConfigError with its location
    args = ["compare", path, "--format", "json"] + variant_args
    for s in _set_list(sets, "compare"):
        args += ["--set", s]
    if jobs:
        args += ["--jobs", str(int(jobs))]
    if fidelity:
        args += ["--fidelity", fidelity]
    return _rows(json.loads(_run_cli(args))["variants"])


def plan(scenario=None, cluster=None, model=None, nodes=None, gpus=None, seq=None,
         global_batch=None, precision=None, top=None, fix=None, vary=None, sets=None,
         jobs=None, wide=False, allow_partial=False, shard=None, max_simulations=None):
    """Searches the fastest plans that fit, as `trident plan` does: around `scenario` (a path
    or library name), or for `cluster` and `model` (library names or paths) with `nodes` or
    `gpus`, `seq`, `global_batch` and `precision`. `fix` pins searched fields
    ({"plan.schedule": "1f1b"}), `vary` limits them ({"plan.tensor_parallel": [4, 8]}),
    `sets` overrides other settings, `wide` also searches tp_comm_overlap,
    overlap_param_gather and ZeRO-2/3 sharding, `shard` is "I/N", `max_simulations` caps the
    simulations (a search it stops before its top is proven warns, with UserWarning, and
    returns the best of those simulated). Returns the ranked plans, fastest first, one row
    each (a pandas DataFrame when pandas is importable, else a list of dicts, as sweep and
    compare return) with the keys of `trident plan --format json`'s `plans` (plan,
    set, step_time_s, step_lower_bound_s, tokens_per_s, mfu, peak_memory_gib,
    memory_margin_gib, tp/pp/dp/cp/ep_comm_exposed_s, bubble_fraction,
    compute_utilization). Bad input raises ConfigError; an argument of the wrong type
    TypeError, naming it."""
    import json

    vary_args = _vary_args(vary, "plan")
    if fix is not None and not isinstance(fix, dict):
        raise TypeError("trident.plan: fix must be a dict {\"plan.schedule\": \"1f1b\"}, not %s"
                        % _type_name(fix))
    if scenario is not None:
        path = _path_arg(scenario, "plan")
        validate(path, sets)  # bad input raises ConfigError with its location
        args = ["plan", path]
    else:
        args = ["plan"]
    named = [("--cluster", cluster), ("--model", model), ("--nodes", nodes), ("--gpus", gpus),
             ("--seq", seq), ("--global-batch", global_batch), ("--precision", precision),
             ("--top", top), ("--jobs", jobs), ("--shard", shard),
             ("--max-simulations", max_simulations)]
    for flag, value in named:
        if value is None:
            continue
        if flag in ("--cluster", "--model"):
            value = _path_arg(value, "plan", flag[2:])
        elif flag not in ("--precision", "--shard") and (
                isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise TypeError("trident.plan: %s must be an int, not %s"
                            % (flag[2:].replace("-", "_"), _type_name(value)))
        elif flag in ("--precision", "--shard"):
            value = _text_arg(value, "plan", flag[2:])
        args += [flag, str(value)]
    for key, value in (fix or {}).items():
        args += ["--fix", "%s=%s" % (_text_arg(key, "plan", "a key of fix"), _value_text(value))]
    args += vary_args
    for s in _set_list(sets, "plan"):
        args += ["--set", s]
    if wide:
        args.append("--wide")
    if allow_partial:
        args.append("--allow-partial")
    out = json.loads(_run_cli(args + ["--format", "json"]))
    if not out.get("proven", True):
        import warnings

        warnings.warn("trident plan: not proven: --max-simulations %d reached; no unsimulated "
                      "plan steps faster than %.4f s" % (out["max_simulations"],
                                                         out["unsimulated_lower_bound_s"]),
                      stacklevel=2)
    return _rows(out["plans"])
