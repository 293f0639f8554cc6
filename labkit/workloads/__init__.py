"""Workloads: each declares its shapes, inputs, reference, kernels and checks."""
