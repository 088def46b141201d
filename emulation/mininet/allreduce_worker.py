"""One rank of a real data-parallel all-reduce, run inside an emulated host's namespace:
jax's CPU collectives (gloo over TCP) sum a float32 gradient buffer across the ranks.

    python -m emulation.mininet.allreduce_worker --rank R --world N --coordinator IP:PORT
        --bind-ip IP --size-bytes B

Joins the group through jax's coordinator (rank 0 hosts it), compiles the all-reduce
ahead of time, opens gloo's connections with a one-element all-reduce, prints
``{"ready": true}``, reads the wall-clock instant to start at (epoch s, one line on stdin:
every rank gets the same), waits for it, runs the timed all-reduce, checks the sum (every element must be
1 + 2 + ... + N) and prints one JSON line: rank, start and end (CLOCK_REALTIME, s), bytes.
gloo listens and connects on ``--bind-ip`` only, so its traffic stays on the emulated
links. Needs the optional ``jax`` (requirements-collective.txt).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time


def _gloo_on(ip: str) -> None:
    """Make jax's gloo collectives bind to ``ip`` (jax passes no address of its own)."""
    from jax._src import xla_bridge
    make = xla_bridge._jax.make_gloo_tcp_collectives
    xla_bridge._jax.make_gloo_tcp_collectives = (
        lambda **kw: make(hostname=ip, **kw))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--coordinator", required=True, help="IP:PORT of rank 0's coordinator")
    ap.add_argument("--bind-ip", required=True, help="this host's emulated address")
    ap.add_argument("--size-bytes", type=int, required=True, help="gradient buffer bytes")
    args = ap.parse_args(argv)
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    _gloo_on(args.bind_ip)
    jax.distributed.initialize(coordinator_address=args.coordinator,
                               num_processes=args.world, process_id=args.rank)
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array(jax.devices()), ("ranks",))
    n = args.size_bytes // 4
    local = np.full((1, n), args.rank + 1, dtype=np.float32)
    grads = jax.make_array_from_process_local_data(
        NamedSharding(mesh, PartitionSpec("ranks")), local)
    summed = jax.jit(lambda g: jnp.sum(g, axis=0),
                     out_shardings=NamedSharding(mesh, PartitionSpec()))
    allreduce = summed.lower(grads).compile()
    one = jax.make_array_from_process_local_data(
        NamedSharding(mesh, PartitionSpec("ranks")), local[:, :1])
    summed(one).block_until_ready()  # gloo's connections, 4 bytes per rank
    print(json.dumps({"ready": True}), flush=True)
    start_at = float(sys.stdin.readline())
    time.sleep(max(0.0, start_at - time.time()))
    start = time.time()
    out = allreduce(grads)
    out.block_until_ready()
    end = time.time()
    total = np.asarray(out.addressable_data(0))
    expect = args.world * (args.world + 1) / 2
    ok = bool(np.all(total == expect))
    print(json.dumps({"rank": args.rank, "start_s": start, "end_s": end,
                      "size_bytes": 4 * n, "sum_ok": ok}), flush=True)
    jax.distributed.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
