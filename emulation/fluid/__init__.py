"""Flow-level (fluid) backend: event-driven simulator, rate-allocation kernels, CLI."""
from emulation.fluid.run import run_fluid

__all__ = ["run_fluid"]
