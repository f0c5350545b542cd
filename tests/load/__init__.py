"""Load tests: run by `make loadtest`, never by pytest."""
