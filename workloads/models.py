"""DL model catalogue: parameter counts, gradient bytes and compute time per iteration.

Every figure is a published one; each entry names its source.
Gradient bytes are fp32 (4 bytes per parameter); compute_s is forward+backward time of
one iteration on one GPU. Entries whose compute time is an estimate say so in ``source``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    """One DL model: ``params`` weights, ``size_bytes`` = 4 x params, ``compute_s`` per iteration."""

    name: str
    params: int
    compute_s: float | None
    source: str

    @property
    def size_bytes(self) -> int:
        return 4 * self.params


# V100 FP32 peak 15.7 TFLOP/s at 40% -> 6.28e12 FLOP/s; 6 x params x tokens FLOPs per
# iteration (an estimate, the usual training-FLOPs rule), BERT batch 32 x 128 tokens, GPT-2
# batch 8 x 1024.
_EFFECTIVE_FLOPS = 15.7e12 * 0.40


def _transformer_compute_s(params: int, tokens: int) -> float:
    return 6.0 * params * tokens / _EFFECTIVE_FLOPS


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("alexnet", 61_100_840, 0.0198, "cnn-benchmarks, batch 16, GTX 1080"),
        Model("vgg16", 138_357_544, 0.183, "cnn-benchmarks, batch 16, GTX 1080"),
        Model("vgg19", 143_667_240, 0.210, "cnn-benchmarks, batch 16, GTX 1080"),
        Model("resnet50", 25_636_712, 0.349,
              "NVIDIA DeepLearningExamples, batch 128, V100 FP32 (367 img/s)"),
        Model("resnet101", 44_707_176, 0.224, "cnn-benchmarks, batch 16, GTX 1080"),
        Model("inception_v3", 23_851_784, None, "params only; no measured compute time"),
        Model("bert_base", 110_000_000, _transformer_compute_s(110_000_000, 32 * 128),
              "estimate: 6*params*tokens FLOPs, 32x128 tokens, 40% of V100 FP32 peak"),
        Model("bert_large", 340_000_000, _transformer_compute_s(340_000_000, 32 * 128),
              "estimate: 6*params*tokens FLOPs, 32x128 tokens, 40% of V100 FP32 peak"),
        Model("gpt2_small", 124_000_000, _transformer_compute_s(124_000_000, 8 * 1024),
              "estimate: 6*params*tokens FLOPs, 8x1024 tokens, 40% of V100 FP32 peak"),
        Model("gpt2_medium", 355_000_000, _transformer_compute_s(355_000_000, 8 * 1024),
              "estimate: 6*params*tokens FLOPs, 8x1024 tokens, 40% of V100 FP32 peak"),
    )
}

# Mixes used by the default suite (BytePS's communication- vs computation-bound split).
COMM_HEAVY = ("vgg16", "vgg19", "alexnet")
COMPUTE_HEAVY = ("resnet50", "resnet101", "bert_base")


def get_model(name: str) -> Model:
    """Return the catalogue entry ``name``; ValueError naming the known models otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))}") from None
