"""Flow-level (fluid) backend: event-driven simulator, rate allocation and its compiled
kernels, CLI. ``run_fluid`` (``emulation.fluid.run``) is imported on first access, so that
the kernel modules load without the simulator."""


def __getattr__(name: str):
    if name == "run_fluid":
        from emulation.fluid.run import run_fluid
        return run_fluid
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["run_fluid"]
