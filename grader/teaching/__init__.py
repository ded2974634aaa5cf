"""What the notebooks show beside the puzzles: pictures, experiments on compiled kernels (registers,
instructions, rounding), and shared-memory layouts. Course material, not grading: nothing in the pipeline
imports it."""
