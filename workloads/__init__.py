"""What traffic exists: DL models, HPO stage generators, sync coflows, trace format and I/O
(and what the project's command lines share: strict TOML loading, ``config``; how they
end, ``cli``)."""
