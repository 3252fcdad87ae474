"""What one offline passphrase guess costs an attacker holding a copy of the file.

Run by hand: `.venv/bin/python bench/passphrase_guess.py [N]` (default 5 guesses).

A guess is what `annotate.trust.people.authenticate` does with a candidate: scrypt at the stored
cost (N = 2**17, r = 8, p = 1, 128 MiB) and one HMAC compared with the stored tag; an
attacker with the file does exactly this per candidate, on as many cores as they have (each
guess needs its own 128 MiB). Prints each guess's time, the median, the load average, and
what zxcvbn's minimum score (3: about 10**8 guesses) then costs on one core.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.pop("PAW_SCRYPT_LOG2N", None)  # the real cost

from annotate.trust import keys  # noqa: E402


def main(n: int = 5) -> None:
    params = keys.current_params()
    salt = keys.new_salt()
    tag = keys.auth_tag(keys.stretch("the real passphrase", salt, params))
    load = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else "?"
    times = []
    for guess in range(n):
        started = time.perf_counter()
        keys.auth_tag(keys.stretch(f"guess {guess}", salt, params)) == tag
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    print(f"scrypt N=2**{params['n'].bit_length() - 1} r={params['r']} p={params['p']}: "
          f"{', '.join(f'{t:.2f}' for t in times)} s per guess; median {median:.2f} s "
          f"(load average {' '.join(load)})")
    years = 1e8 * median / (365.25 * 24 * 3600)
    print(f"10**8 guesses (zxcvbn score 3) at that rate: {years:.1f} core-years")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
