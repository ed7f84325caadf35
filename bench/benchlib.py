"""Helpers the bench scripts share: errors, tuning logs, the CPU's name, subprocesses and matplotlib."""
import json
import subprocess
import sys


def fail(name, msg):
    """Ends the script with "<name>: error: <msg>"."""
    sys.exit(f"{name}: error: {msg}")


def make_fail(name):
    """fail() for one script: fail = make_fail("batch"); fail("...")."""
    return lambda msg: fail(name, msg)


def run(cmd, name, whole_stderr=False):
    """cmd's stdout; on failure the script's error: by default the start of cmd and the last line of
    its stderr, with whole_stderr all of cmd and all of its stderr."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        if whole_stderr:
            fail(name, f"{' '.join(cmd)} failed:\n{p.stderr.strip()}")
        last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        fail(name, f"{' '.join(cmd[:4])} ... failed: {last}")
    return p.stdout


def read_log(path, missing_ok=True, empty_fails=None):
    """The records of a JSON-lines tuning log, without a torn last line from a killed run.
    missing_ok: a log that cannot be read holds no records (else OSError).
    empty_fails: a script name; a log without records is then that script's error."""
    recs = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        recs.append(json.loads(line))
                    except ValueError:
                        pass  # a torn last line from a killed run
    except OSError:
        if not missing_ok:
            raise
    if not recs and empty_fails:
        fail(empty_fails, f"log '{path}' holds no records; tune first")
    return recs


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def plt(name, optional=False):
    """matplotlib.pyplot on the Agg backend. Without matplotlib: the script's error with an apt-get
    hint, or with optional a warning on stderr and None (the caller then draws no figure)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as p
    except ImportError:
        if optional:
            print(f"{name}: python3-matplotlib is missing; no figure (sudo apt-get install python3-matplotlib)",
                  file=sys.stderr)
            return None
        fail(name, "python3-matplotlib is missing; install it (sudo apt-get install python3-matplotlib)")
    return p
