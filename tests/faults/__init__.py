"""Fault-injection tests: every fault is refused with one line or leaves the results unchanged."""
