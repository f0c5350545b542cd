"""Development tools: benchmarks and a local-server helper. Not part of the installed package."""
