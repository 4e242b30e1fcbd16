"""dpregret: Monte Carlo simulation of differentially private online learning, from Python.

The same engine and the same numbers as the `dpregret` command (docs/PYTHON.md):

    import dpregret
    r = dpregret.run("experiments/quickstart.toml", set={"run.instances": 200})
    r.final_regret          # NumPy array (points, instances): every instance's regret at t = T
    r.summary               # summary.csv's columns (a pandas DataFrame when pandas is installed)
    r.save("runs/mine")     # the files `dpregret run` writes, byte for byte

A config is a path to an experiment file (docs/CONFIG.md), its TOML text, or a dict of sections; lists are sweeps.
"""
from __future__ import annotations

import csv
import io
import json
import mmap
import operator
import os
import sys
import tempfile
import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import _core, _toml
from ._core import ConfigError, NonFiniteResult

__all__ = ["run", "Result", "audit", "AuditResult", "audit_samples", "merge", "sample", "keys", "info", "ConfigError", "NonFiniteResult", "DPRegretWarning", "__version__"]

__version__: str = _core.__version__


class DPRegretWarning(UserWarning):
    """A point's warning: a setting the run accepts but questions, or a learner that guarantees less privacy than
    its keys request (run.json then reports what it does guarantee)."""


def info() -> dict:
    """What this build is and what it can use: version, commit, compiler, RNG, CUDA compiled and GPUs visible."""
    return dict(_core.info())


def keys(algorithm: str | None = None) -> list[dict]:
    """Every key an experiment accepts (`dpregret run --list-keys` as rows): section, component, key, type,
    default, min, max, choices, doc. `algorithm` keeps [run]'s keys and that learner's (or adversary kind's)."""
    if algorithm is not None and not isinstance(algorithm, str):
        raise TypeError(f"keys: algorithm must be a learner's or an adversary kind's name, a str "
                        f"(got {type(algorithm).__name__})")
    rows = [dict(r) for r in _core.keys()]
    if algorithm is None:
        return rows
    picked = [r for r in rows if r["section"] == "run" or r["component"] == algorithm]
    if len(picked) == sum(r["section"] == "run" for r in rows):
        names = sorted({r["component"] for r in rows if r["component"]})
        raise ConfigError(f"no learner or adversary is called {algorithm!r}; the names are: {', '.join(names)}")
    return picked


def _flag_text(name: str, v: Any) -> str:
    """A keyword argument of sample() as the command's flag text (floats in their shortest exact form)."""
    if isinstance(v, bool):
        raise TypeError(f"sample: {name} takes a number or a name, not a bool")
    if isinstance(v, float):  # np.float64 too, whose repr would be "np.float64(2.0)"
        v = float(v)
        return repr(v) if v == v and abs(v) != float("inf") else str(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if hasattr(v, "item") and getattr(v, "ndim", 0) == 0:  # a NumPy scalar
        return _flag_text(name, v.item())
    if isinstance(v, (int, str)):
        return str(v)
    raise TypeError(f"sample: {name} must be a number or a name (got {type(v).__name__})")


def sample(form: str, *, n: int, seed: int = 0, meta: bool = False, **params: Any):
    """`dpregret sample FORM` (docs/CLI.md "dpregret sample"): draws made exactly as the learners make them, into a
    NumPy array instead of a file. The keyword arguments are the command's flags without the dashes:

        dpregret.sample("laplace", n=100000, scale=2.0, seed=1)              # (n,)
        dpregret.sample("gamma", n=1000, shape=0.5, scale=2.0)
        dpregret.sample("prefix", mechanism="blt", noise="gaussian", scale=1.0, T=1024, n=100)   # (n, T)
        dpregret.sample("expmech", c=0.5, d=1024, n=10000)                  # candidate indices
        dpregret.sample("expmech", c=0.5, scores=np.array([...]), n=10000)  # your own scores

    Forms: laplace, gaussian, exponential, gumbel, gamma (a vector of n draws), tree, prefix (an n x T matrix of
    prefix-sum noise), expmech (n candidate indices). meta=True (prefix only) also returns the mechanism's parameters
    and exact Var(Z_t) as a dict: (array, meta). Row i is a pure function of (seed, i), the same bytes as the
    command's .npy file. Bad values raise ConfigError with the command's message.
    """
    if not isinstance(form, str):
        raise TypeError(f"sample: form must be a str (got {type(form).__name__})")
    flags = {"--n": _flag_text("n", n), "--seed": _flag_text("seed", seed)}
    tmp: list[str] = []
    try:
        for k, v in params.items():
            if k == "scores" and not isinstance(v, (str, os.PathLike)):
                try:
                    scores = np.asarray(v, dtype=np.float64)
                except (TypeError, ValueError):
                    raise TypeError(f"sample: scores must be a 1-d array of numbers or a path to a .npy or .csv file "
                                    f"(got {type(v).__name__} that is not numbers)") from None
                if not tmp:
                    tmp.append(tempfile.mkdtemp(prefix="dpregret-"))
                v = os.path.join(tmp[0], "scores.npy")
                np.save(v, np.ascontiguousarray(scores))
            flags["--" + k] = _flag_text(k, v)
        if meta:
            if form != "prefix":
                raise ConfigError("meta=True is a parameter of sample('prefix', ...)")
            flags["--meta"] = "meta.json"  # asks for the parameters; nothing is written
        draws, meta_text = _core.sample(form, flags)
    finally:
        _remove(tmp)
    return (draws, json.loads(meta_text)) if meta else draws


def _overrides(set_: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    if set_ is None:
        return []
    if isinstance(set_, str):
        return [set_]
    if isinstance(set_, Mapping):
        return [f"{k}={_toml.value(v, str(k))}" for k, v in set_.items()]
    if not isinstance(set_, Iterable) or isinstance(set_, (bytes, bytearray)):
        raise TypeError(f'set must be a dict {{"section.key": value}} or a list of "section.key=VALUE" strings '
                        f"(got {type(set_).__name__})")
    out = list(set_)
    for o in out:
        if not isinstance(o, str):
            raise TypeError(f"set: a list of overrides holds 'section.key=VALUE' strings (got {type(o).__name__})")
    return out


# The [adversary] path that stands for a dict config's losses array (run.json's settings show it).
_LOSSES_NAME = "<array: [adversary] losses>"


def _in_a_file_mapping(a: np.ndarray) -> bool:
    """Whether a's memory lies (in part) in a mapping of a file: np.memmap, np.load(..., mmap_mode=...), an mmap.mmap,
    shared memory. Any process may truncate that file while the run reads it, and a read past its new end kills the
    reading process with SIGBUS: the interpreter, not an exception. /proc/self/maps says it for any array (a mapping
    with an inode is a file's); without it, the array's chain of bases is looked at."""
    if a.nbytes == 0:
        return False
    start = a.__array_interface__["data"][0]
    end = start + a.nbytes
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)  # address perms offset dev inode [path]
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                if lo < end and start < hi and fields[4] != "0":
                    return True
        return False
    except (OSError, ValueError, IndexError):
        base = a
        while base is not None:
            if isinstance(base, (np.memmap, mmap.mmap)):
                return True
            base = getattr(base, "base", None)
        return False


def _memory_losses(config: Mapping[str, Any], arrays: dict) -> dict:
    """A dict config whose [adversary] losses is an array: the run reads the array in place (no file, no copy
    when it is float64 and C-contiguous; any other array is converted once) through a path that names it. An array
    in a file mapping (np.memmap) is copied once: see _in_a_file_mapping."""
    adv = config.get("adversary")
    if not isinstance(adv, Mapping) or "losses" not in adv:
        return dict(config)
    adv = dict(adv)
    given = adv.pop("losses")
    try:
        losses = np.asarray(given)
    except (TypeError, ValueError):  # a ragged list
        losses = None
    if losses is None or losses.dtype.kind not in "biuf":  # bool, int, unsigned, float
        raise TypeError(f"[adversary] losses must be a (T, d) array of numbers (got {type(given).__name__}"
                        f"{'' if losses is None else ' of ' + str(losses.dtype)}); a loss file is given as "
                        f"[adversary] path")
    if losses.ndim != 2:
        raise ConfigError(f"[adversary] losses must be a (T, d) array (got shape {losses.shape})")
    losses = np.ascontiguousarray(losses, dtype=np.float64)
    if _in_a_file_mapping(losses):
        losses = np.array(losses, dtype=np.float64, order="C", copy=True)
    if "path" in adv:
        raise ConfigError("[adversary] gives both losses and path; give one")
    arrays[_LOSSES_NAME] = losses
    adv["path"] = _LOSSES_NAME
    out = dict(config)
    out["adversary"] = adv
    return out


def _remove(tmp: list[str]) -> None:
    for d in tmp:
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        os.rmdir(d)


def _source(config: Any, arrays: dict) -> tuple[str, str, str]:
    """(config_path, toml_text, source_name) for the core library; a dict config's arrays go into `arrays`."""
    if isinstance(config, Mapping):
        return "", _toml.dumps(_memory_losses(config, arrays)), "<dict>"
    if isinstance(config, os.PathLike):
        return _path("config", config), "", ""
    if isinstance(config, str):
        if "\n" not in config and os.path.isfile(config):
            return config, "", ""
        if "\n" in config or "=" in config:
            return "", config, "<string>"
        return config, "", ""
    raise TypeError(f"config must be a path, TOML text or a dict of sections (got {type(config).__name__})")


def _path(name: str, value: Any) -> str:
    """A path argument (`out`, `directory`, a config file) as the core library takes it: a str."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a path: a str or an os.PathLike such as pathlib.Path "
                        f"(got {type(value).__name__})")
    path = os.fspath(value)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name}: the path {path!r} is not valid UTF-8; give it as a str that is") from None
    return path


def _backend(backend: Any) -> str:
    if not isinstance(backend, str):
        raise TypeError(f'backend must be "auto", "cpu" or "cuda" (got {type(backend).__name__})')
    return backend


def _memory_limit(memory_limit: Any) -> str:
    if not isinstance(memory_limit, str):
        raise TypeError(f'memory_limit must be a str: "auto", "none" or a size such as "8G", "512M" or '
                        f'"1000000" (bytes) (got {type(memory_limit).__name__} {memory_limit!r})')
    return memory_limit


def _threads(threads: Any) -> int:
    """threads as the core library takes it: 0 for every core."""
    if threads is None:
        return 0
    try:
        n = None if isinstance(threads, bool) else operator.index(threads)  # int and NumPy integers
    except TypeError:
        n = None
    if n is None or not 1 <= n <= 4096:
        raise ConfigError(f"threads must be an integer in 1..4096 (got {threads!r})")
    return n


def _want_progress(progress: bool | None) -> bool:
    if progress is not None:
        return bool(progress)
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Bar:
    """tqdm over instance-rounds when asked for and tqdm is installed; otherwise nothing."""

    def __init__(self, total: int, on: bool, label: str):
        self.bar = None
        self.shown = 0
        if not on:
            return
        try:
            if "ipykernel" in sys.modules:
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=total, unit="inst-rounds", unit_scale=True, desc=label)

    def update(self, done: int) -> None:
        if self.bar is not None and done > self.shown:
            self.bar.update(done - self.shown)
            self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _wait(job, progress: bool | None, label: str) -> None:
    """Starts the job's simulation and waits for it (the GIL released), updating a progress bar; on Ctrl-C (or any
    exception) stops it at its next chunk and re-raises."""
    bar = _Bar(job.total(), _want_progress(progress), label)
    try:
        job.start()
        while not job.wait(0.1):
            bar.update(job.progress())
    except BaseException:  # KeyboardInterrupt: stop the simulation at its next chunk, then re-raise
        job.cancel()
        while not job.wait(0.1):
            pass
        raise
    finally:
        bar.update(job.progress())
        bar.close()
    if not job.finish():
        raise KeyboardInterrupt(f"{label} was stopped")


def _write(save, directory: str, label: str) -> None:
    """Runs a save (_core.Save: the files written on a thread of their own while Python waits with the GIL released)
    and waits for it. Ctrl-C stops it between rows: the files are then all written (the Ctrl-C came after the last
    was complete) or none, and the KeyboardInterrupt raised says which."""
    try:
        save.start()
        while not save.wait(0.1):
            pass
    except BaseException as e:
        save.cancel()
        while not save.wait(0.1):
            pass
        if not isinstance(e, KeyboardInterrupt):
            raise
        try:
            written = save.finish()
        except Exception:
            written = False  # a failed write leaves none of its files
        if written:
            raise KeyboardInterrupt(f"{label}: interrupted after the files were written: {directory} holds them "
                                    f"all") from None
        raise KeyboardInterrupt(f"{label}: interrupted; nothing was written into {directory}") from None
    if not save.finish():  # only cancel() stops a save
        raise KeyboardInterrupt(f"{label}: interrupted; nothing was written into {directory}")


def _simulate(make, config: Any, set_, threads: int | None, progress: bool | None, label: str, out: str | None):
    """Plans a job with make(config_path, toml_text, source_name, overrides, arrays, threads) (ConfigError on bad
    input), issues its warnings, takes the directory `out` (if given: created, locked, checked for room before
    anything is simulated), runs the job and writes its files into `out`; returns the job finished. The job holds
    the arrays it reads. On any failure or Ctrl-C, `out` is given up with nothing written into it."""
    threads = _threads(threads)
    arrays: dict[str, np.ndarray] = {}
    path, text, name = _source(config, arrays)
    job = make(path, text, name, _overrides(set_), arrays, threads)
    for w in job.warnings():
        warnings.warn(w, DPRegretWarning, stacklevel=3)
    if out is not None:
        job.take_out(out)
    try:
        _wait(job, progress, label)
        if out is not None:
            _write(job.save_out(), out, label)
    except BaseException:
        job.release_out()
        raise
    return job


def run(config: Any, *, set: Mapping[str, Any] | Sequence[str] | None = None, backend: str = "auto",
        threads: int | None = None, progress: bool | None = None, out: str | os.PathLike | None = None,
        memory_limit: str = "auto") -> "Result":
    """Runs an experiment and returns its Result (docs/PYTHON.md).

    config:   a path to an experiment file, its TOML text, or a dict {"run": {...}, "adversary": {...},
              "learner": {...}}; a list value is a sweep. [adversary] losses may be a (T, d) NumPy array (read in place).
    set:      overrides, as `dpregret run --set`: a dict {"learner.epsilon": [0.1, 1]} or ["learner.epsilon=[0.1,1]"].
    backend:  "auto" (the GPU when one is visible and the run can use it), "cpu" or "cuda".
    threads:  CPU threads (default: every core); the results do not depend on it.
    progress: a tqdm bar on stderr (default: when stderr is a terminal or in a notebook; needs tqdm).
    out:      also write the CLI's files into this directory (Result.save); taken (created, locked, checked for room)
              before anything is simulated.
    memory_limit: "auto" (refuse a run estimated not to fit in the memory available), "none", or a size ("8G").

    Bad input raises ConfigError (a ValueError) with the command's message, before anything is simulated.
    Ctrl-C stops the run within a chunk and raises KeyboardInterrupt; nothing is written.
    """
    out = None if out is None else _path("out", out)
    backend, memory_limit = _backend(backend), _memory_limit(memory_limit)
    job = _simulate(lambda path, text, name, overrides, arrays, threads: _core.Job(
        path, text, name, overrides, arrays, backend, threads, memory_limit), config, set, threads, progress,
        "dpregret run", out)
    return Result(job)


_INT_COLUMNS = ("point", "d", "T", "t", "instances")


def _columns(text: str) -> dict[str, np.ndarray]:
    """summary.csv's text as NumPy columns: point, d, T, t, instances as int64, algorithm as str, the statistics as
    float64; a swept key's column as float64 when every value is a number (an empty cell, a point that lacks the
    key, as NaN), else as str."""
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    cols: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        values = [r[j] for r in body]
        if name in _INT_COLUMNS:
            cols[name] = np.array([int(v) for v in values], dtype=np.int64)
        elif name == "algorithm":
            cols[name] = np.array(values, dtype=str)
        else:
            try:
                cols[name] = np.array([float(v) if v else np.nan for v in values], dtype=np.float64)
            except ValueError:
                cols[name] = np.array(values, dtype=str)
    return cols


class Result:
    """A finished run: its points, every instance's regret, the summary and what run.json holds."""

    def __init__(self, job: "_core.Job"):
        self._job = job
        self._cache: dict[str, Any] = {}

    def _get(self, key: str, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def run_info(self) -> dict:
        """What run.json holds (every point inline)."""
        return self._get("run_info", lambda: json.loads(self._job.run_json()))

    @property
    def points(self) -> list[dict]:
        """Each point as run.json describes it: algorithm, adversary, d, T, seed, settings (every resolved key),
        swept (the swept keys' values), privacy, warnings, diagnostics, checkpoints, backend."""
        return self.run_info["points"]

    @property
    def privacy(self) -> list[dict]:
        """Per point, the (epsilon, delta) the learner guarantees and how: run.json's "privacy", with its numbers as
        floats (run.json writes an infinite epsilon as the string "inf": here it is float("inf"))."""
        def numbers(d: dict) -> dict:
            return {k: float(v) if isinstance(v, str) and v in ("inf", "-inf") else v for k, v in d.items()}
        return [numbers(p["privacy"]) for p in self.points]

    @property
    def backend(self) -> str:
        return self._job.backend()

    @property
    def final_regret(self) -> np.ndarray:
        """(points, instances): each instance's regret at t = T (final_regret.csv's regret column)."""
        return self._get("final_regret", lambda: self._job.final_values(False))

    @property
    def realized_regret(self) -> np.ndarray:
        """(points, instances): each instance's realised regret at t = T (sum of l_t(i_t) - comparator)."""
        return self._get("realized_regret", lambda: self._job.final_values(True))

    @property
    def diagnostics(self) -> dict[str, np.ndarray]:
        """final_regret.csv's diagnostic columns: name -> (points, instances), NaN where a point's learner does not
        report it."""
        return self._get("diagnostics", lambda: {n: self._job.diagnostic(n) for n in self._job.diagnostic_names()})

    def _point(self, point: Any) -> int:
        n = self._job.point_count()
        try:
            p = None if isinstance(point, bool) else operator.index(point)  # int and NumPy integers
        except TypeError:
            p = None
        if p is None:
            raise TypeError(f"point must be an int, a point's index in 0..{n - 1} (got {type(point).__name__})")
        if not 0 <= p < n:
            raise IndexError(f"point {p} is not in 0..{n - 1}: the run has {n} point(s)")
        return p

    def regret(self, point: int = 0, *, realized: bool = False) -> np.ndarray:
        """(instances, checkpoints): point `point`'s regret at every checkpoint (Result.checkpoints(point))."""
        return self._job.point_values(self._point(point), bool(realized))

    def checkpoints(self, point: int = 0) -> np.ndarray:
        """The rounds t at which point `point` records regret (log-spaced, always ending at T)."""
        return np.array(self._job.checkpoints(self._point(point)), dtype=np.int64)

    @property
    def summary(self):
        """summary.csv's rows: a pandas DataFrame when pandas is installed, else a dict of NumPy columns."""
        def make():
            text = self._job.summary_csv()
            try:
                import pandas as pd
            except ImportError:
                return _columns(text)
            return pd.read_csv(io.StringIO(text))
        return self._get("summary", make)

    def save(self, directory: str | os.PathLike) -> None:
        """Writes summary.csv, final_regret.csv and run.json (points.jsonl for more than 1000 points) into
        `directory` (created if missing; refused if it already holds a run, or if the files would not fit on its
        disk): the files `dpregret run` writes. Ctrl-C stops the writing: the KeyboardInterrupt says whether
        nothing was written or (when it came too late) every file was."""
        directory = _path("directory", directory)
        _write(self._job.save(directory), directory, "Result.save")

    def __repr__(self) -> str:
        n = self._job.point_count()
        return f"<dpregret.Result: {n} point(s) x {self._job.instances()} instances on {self.backend}>"


def audit(config: Any, *, set: Mapping[str, Any] | Sequence[str] | None = None, backend: str = "auto",
          threads: int | None = None, progress: bool | None = None, out: str | os.PathLike | None = None,
          memory_limit: str = "auto", allow_planted: bool = False, statistic: bool = False, search: bool = False,
          pilot: int | None = None, one_run: bool = False, canaries: int | None = None, window: int | None = None,
          score: str | None = None) -> "AuditResult":
    """Audits a learner empirically (`dpregret audit`, docs/AUDITS.md): runs it [run] instances times on a loss
    sequence and on its neighbour and bounds its epsilon from below at confidence 1 - [audit] alpha.

    config, set, backend, threads, progress, out, memory_limit: as for run(); the config has an [audit] section.
    allow_planted: allow [audit] planted (a learner with a planted privacy bug, to check that the audit catches it).
    statistic: keep every trial's statistic (AuditResult.statistic; 2 x trials doubles).
    search: choose the neighbouring pair and the statistic (`dpregret audit --search`, docs/AUDITS.md "Searching for
    the pair"): each candidate is audited on a pilot of `pilot` trials per side (default [run] instances / 50, at
    least 20000) with its own seed, then the best one as the config asks; AuditResult.search has the table, and
    out= / save() also write pair.toml, which repeats the chosen audit.
    one_run: `dpregret audit --one-run` (docs/AUDITS.md "One-run audits"): one run per trial with `canaries` canary
    rounds (default 1000) that each keep the base loss or take the neighbour rule's by a coin of their own, scored by
    the charges of the `window` rounds on each side ("fitted", the default score, or "difference"); eps_lb from
    the right guesses of the coins. Its result has `canaries` and `guesses` and no event, curve, region or
    statistic; save() writes audit.json only.
    Bad input raises ConfigError; Ctrl-C raises KeyboardInterrupt with nothing written.
    """
    out = None if out is None else _path("out", out)
    backend, memory_limit = _backend(backend), _memory_limit(memory_limit)
    for name, flag in (("allow_planted", allow_planted), ("statistic", statistic), ("search", search),
                       ("one_run", one_run)):
        if not isinstance(flag, (bool, np.bool_)):  # "no" would be truthy and plant the bug
            raise TypeError(f"audit: {name} must be True or False (got {flag!r})")
    if pilot is not None:
        if isinstance(pilot, (bool, np.bool_)) or not isinstance(pilot, (int, np.integer)):
            raise TypeError(f"audit: pilot must be a whole number of trials per side (got {pilot!r})")
        if not search:
            raise ConfigError(f"audit: pilot={pilot}: only search=True runs pilots")
        if not 2 <= pilot <= 4294967295:
            raise ConfigError(f"audit: pilot={pilot}: must be in [2, 4294967295] trials per side")
    for name, value, low in (("canaries", canaries, 1), ("window", window, 0)):
        if value is None:
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"audit: {name} must be a whole number (got {value!r})")
        if not one_run:
            raise ConfigError(f"audit: {name}={value}: only a one-run audit (one_run=True) has canaries")
        if not low <= value <= 2147483647:
            raise ConfigError(f"audit: {name}={value}: must be in [{low}, 2147483647]")
    if score is not None:
        if not isinstance(score, str):
            raise TypeError(f"audit: score must be \"fitted\" or \"difference\" (got {score!r})")
        if not one_run:
            raise ConfigError(f"audit: score={score!r}: only a one-run audit (one_run=True) has canaries")
        if score not in ("fitted", "difference"):
            raise ConfigError(f"audit: score={score!r}: must be \"fitted\" or \"difference\"")
    job = _simulate(lambda path, text, name, overrides, arrays, threads: _core.Audit(
        path, text, name, overrides, arrays, backend, threads, memory_limit, bool(allow_planted),
        bool(statistic), bool(search), int(pilot or 0), bool(one_run), int(1000 if canaries is None else canaries),
        int(window or 0), score != "difference"),
        config, set, threads, progress, "dpregret audit", out)
    return AuditResult(job)


def merge(shards: Sequence[str | os.PathLike], out: str | os.PathLike, *, bounded_memory: bool = False,
          memory_limit: str = "auto") -> None:
    """Joins the K shard directories of a run (`dpregret run ... --shard I/K`) into the unsharded run's outputs in
    `out`: `dpregret merge SHARD... --out OUT` (docs/SCALING.md), the same bytes. The shards are checked (one run,
    every shard once, the config unchanged) and `out` is taken (created, locked; refused if it holds results of any
    kind) before anything is read. bounded_memory: hold no point's per-instance values (several passes over the
    shards; the same bytes). Bad input raises ConfigError; Ctrl-C stops it with nothing written that looks complete.
    """
    if isinstance(shards, (str, os.PathLike)):
        raise TypeError("merge: shards must be a list of shard directories (got one path)")
    dirs = [_path("shards", s) for s in shards]
    out = _path("out", out)
    if not isinstance(bounded_memory, (bool, np.bool_)):
        raise TypeError(f"merge: bounded_memory must be True or False (got {bounded_memory!r})")
    _write(_core.merge(dirs, out, bool(bounded_memory), _memory_limit(memory_limit)), out, "merge")


def _sample_array(name: str, values: Any) -> np.ndarray:
    """A sample as audit_samples takes it: float64, one axis (shape (n,), (n, 1) or (1, n)), C order."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"audit_samples: {name} must be an array of real numbers (one value per trial): {e}") from None
    if sum(n > 1 for n in a.shape) > 1:
        raise ConfigError(f"audit_samples: {name} has shape {a.shape}; a sample is one axis of values, one per trial")
    return np.ascontiguousarray(a.reshape(-1))


def audit_samples(a: Any, b: Any, *, epsilon: float | None = None, delta: float | None = None,
                  mu: float | None = None, alpha: float = 0.05, selection: float = 0.2, candidates: int = 64,
                  out: str | os.PathLike | None = None) -> "AuditResult":
    """Audits anyone's mechanism from two samples of its statistic (`dpregret audit-samples`, docs/AUDITS.md
    "Audits of anyone's samples"): `a` holds one value per trial on an input D, `b` per trial on a neighbouring D',
    every trial with its own randomness, in an order that does not depend on the values.

    The event (a threshold or a set of values) is chosen on the first `selection` share of each sample and counted on
    the rest; the bound is eps_lb (Clopper-Pearson, confidence 1 - alpha) against `epsilon` (with `delta`, default
    0), or with `mu` the Gaussian-DP mu_lb against mu (eps_lb is then the eps of mu_lb-GDP at `delta`, default 1e-5).
    out: also write audit.json and privacy_region.csv there, as the command does. Returns an AuditResult; its
    verdict is "VIOLATION" when the bound exceeds the claim. Bad input raises ConfigError naming it.
    """
    if epsilon is None and mu is None:
        raise ConfigError("audit_samples needs the claim: epsilon=E (and delta=), or mu=M for Gaussian DP")
    x, y = _sample_array("a", a), _sample_array("b", b)
    mu_value = 0.0 if mu is None else float(mu)
    if mu is not None and not mu_value > 0:
        raise ConfigError(f"audit_samples: mu must be > 0 (got {mu})")
    eps_value = float("inf") if epsilon is None else float(epsilon)
    if epsilon is not None and not eps_value > 0:
        raise ConfigError(f"audit_samples: epsilon must be > 0 (got {epsilon})")
    delta_value = (1e-5 if mu is not None else 0.0) if delta is None else float(delta)
    if isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer)):
        raise TypeError(f"audit_samples: candidates must be an integer (got {candidates!r})")
    job = _core.SampleAudit(x, y, eps_value, delta_value, mu_value, float(alpha), float(selection), int(candidates))
    result = AuditResult(job)
    if out is not None:
        result.save(out)
    return result


class AuditResult:
    """A finished audit: the verdict, the bound and its event (audit.json's fields), the privacy region."""

    def __init__(self, job: "_core.Audit"):
        self._job = job
        self.info: dict = json.loads(job.json())
        """audit.json's object."""

    @property
    def verdict(self) -> str:
        """"consistent" or "VIOLATION" (the lower bound exceeds the learner's claim)."""
        return self.info["verdict"]

    @property
    def epsilon_lb(self) -> float:
        """The lower bound on epsilon at the confidence level (float("inf") when the event never happened on one side)."""
        v = self.info["epsilon_lb"]
        return float(v) if v is not None else float("nan")

    @property
    def mu_lb(self) -> float | None:
        """With the Gaussian-DP bound: the lower bound on mu; else None."""
        return self.info.get("mu_lb")

    @property
    def claimed(self) -> dict:
        """The learner's claim: epsilon, delta, gdp_mu, accountant, mechanism."""
        return self.info["claimed"]

    @property
    def event(self) -> dict | None:
        """The event (kind "threshold" or "set"): how it reads, its tail and threshold or its set's size, and its counts
        on each side (None for a one-run audit)."""
        return self.info.get("event")

    @property
    def canaries(self) -> dict | None:
        """A one-run audit's canaries (per trial, rounds, window, rule, distances, the coin's definition); else None."""
        return self.info.get("canaries")

    @property
    def guesses(self) -> dict | None:
        """A one-run audit's guesses: the rule, where it was chosen, the canaries counted, guessed and right; else
        None."""
        return self.info.get("guesses")

    @property
    def search(self) -> dict | None:
        """With search=True: the pilots (size, seed), every candidate pair with its score or why it was refused, and
        the chosen one (audit.json's "search"); else None."""
        return self.info.get("search")

    @property
    def curve(self) -> dict | None:
        """The (eps, delta) curve (docs/AUDITS.md "The (eps, delta) curve"): its verdict, the claim's curve, and per
        delta the bound, the claim's eps, the event and its counts (None for a one-run audit)."""
        return self.info.get("curve")

    @property
    def fdp(self) -> dict | None:
        """The f-DP test (docs/AUDITS.md "The claimed trade-off curve"): its verdict, the claimed trade-off curve
        (the noise's own where known), the DKW bands, and the threshold and test with the largest margin (None for a
        one-run audit)."""
        return self.info.get("fdp")

    @property
    def confidence(self) -> float:
        return self.info["confidence"]

    @property
    def trials(self) -> int:
        """Trials per side (audit_samples: the smaller sample's size; a one-run audit: its runs)."""
        if "trials_per_side" in self.info:
            return self.info["trials_per_side"]
        if "trials" in self.info:
            return self.info["trials"]
        return min(self.info["samples"]["a"]["values"], self.info["samples"]["b"]["values"])

    @property
    def region(self) -> dict[str, np.ndarray]:
        """privacy_region.csv: threshold, base_ge, neighbour_ge, base_le, neighbour_le, and the claimed trade-off
        curve at each fraction, f_base_ge, f_neighbour_ge, f_base_le, f_neighbour_le (docs/AUDITS.md "The claimed
        trade-off curve")."""
        a = self._job.region()
        names = ("threshold", "base_ge", "neighbour_ge", "base_le", "neighbour_le",
                 "f_base_ge", "f_neighbour_ge", "f_base_le", "f_neighbour_le")
        return {n: a[:, j] for j, n in enumerate(names)}

    @property
    def statistic(self) -> np.ndarray:
        """(2, trials): every trial's statistic, base side then neighbour side (audit(..., statistic=True) only)."""
        return self._job.statistic()

    def save(self, directory: str | os.PathLike) -> None:
        """Writes audit.json, privacy_region.csv (and statistic.npy when kept; a one-run audit: audit.json only) into
        `directory`: the command's files.
        A Ctrl-C during the writing lets it end; the KeyboardInterrupt then says that the files were written."""
        directory = _path("directory", directory)
        _write(self._job.save(directory), directory, "AuditResult.save")

    def __str__(self) -> str:
        return self._job.verdict_line()

    def __repr__(self) -> str:
        return f"<dpregret.AuditResult: {self._job.verdict_line()}>"
