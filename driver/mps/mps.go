// Package mps runs one CUDA MPS control daemon per GPU the driver shares and
// computes the environment that confines a task to its share. It never
// changes a GPU's compute mode or MIG configuration.
package mps
