"""trident from Python: simulate one training step of a transformer on a GPU cluster.

    import trident
    r = trident.simulate("llama3-70b-dgx-h100", sets={"cluster": "hgx-b200"})
    r["step_time_s"], r["mfu"]
    rows = trident.sweep("llama3-70b-dgx-h100", vary={"plan.micro_batch_size": [1, 2]}, jobs=2)
    best = trident.plan(cluster="dgx-h100", model="llama3-8b", nodes=1, seq=4096,
                        global_batch=128, top=3)[0]

Scenarios, clusters and models are paths or library names (`trident list`). Every
simulation runs in its own child process, as the command line does (SimGrid runs one engine
per process). Bad input raises trident.ConfigError (file, line, column, key, message).
"""

import csv
import io
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


def _set_list(sets):
    """{"plan.tensor_parallel": 4} or ["plan.tensor_parallel=4"] -> ["plan.tensor_parallel=4"]."""
    if sets is None:
        return []
    if isinstance(sets, dict):
        return ["%s=%s" % (k, _value_text(v)) for k, v in sets.items()]
    return [str(s) for s in sets]


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

    return json.loads(_trident.simulate_json(str(scenario), _set_list(sets), fidelity))


def validate(path, sets=None):
    """Checks a scenario, cluster, GPU, model or plan file (or library name) without
    simulating. Returns its kind ("scenario", "cluster", ...); raises ConfigError."""
    return _trident.validate(str(path), _set_list(sets))


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


def _vary_args(vary):
    """--vary arguments for {key: value or [values]}."""
    args = []
    for key, values in (vary or {}).items():
        if not isinstance(values, (list, tuple)):
            values = [values]
        args += ["--vary", "%s=%s" % (key, ",".join(_value_text(v) for v in values))]
    return args


def sweep(scenario, vary=None, sets=None, jobs=None):
    """Simulates every point of `vary` ({"plan.micro_batch_size": [1, 2, 4], "cluster":
    ["dgx-h100", "hgx-b200"]}) crossed with the scenario's own `sweep:`, each point in a
    child process, `jobs` at a time. Returns the rows of `trident sweep` (a pandas DataFrame
    when pandas is importable, else a list of dicts); a failed point has status "error"."""
    validate(scenario, sets)  # bad input raises ConfigError with its location
    args = ["sweep", str(scenario)] + _vary_args(vary)
    for s in _set_list(sets):
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

    validate(scenario, sets)  # bad input raises ConfigError with its location
    args = ["compare", str(scenario), "--format", "json"]
    for name, variant_sets in variants.items():
        args += ["--variant", "%s:%s" % (name, ",".join(_set_list(variant_sets)))]
    for s in _set_list(sets):
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
    returns the best of those simulated). Returns the ranked plans,
    fastest first, as dicts with the keys of `trident plan --format json`'s `plans` (plan,
    set, step_time_s, step_lower_bound_s, tokens_per_s, mfu, peak_memory_gib,
    memory_margin_gib, tp/pp/dp/cp/ep_comm_exposed_s, bubble_fraction,
    compute_utilization). Bad input raises ConfigError."""
    import json

    if scenario is not None:
        validate(scenario, sets)  # bad input raises ConfigError with its location
        args = ["plan", str(scenario)]
    else:
        args = ["plan"]
    named = [("--cluster", cluster), ("--model", model), ("--nodes", nodes), ("--gpus", gpus),
             ("--seq", seq), ("--global-batch", global_batch), ("--precision", precision),
             ("--top", top), ("--jobs", jobs), ("--shard", shard),
             ("--max-simulations", max_simulations)]
    for flag, value in named:
        if value is not None:
            args += [flag, str(value)]
    for key, value in (fix or {}).items():
        args += ["--fix", "%s=%s" % (key, _value_text(value))]
    args += _vary_args(vary)
    for s in _set_list(sets):
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
    return out["plans"]
