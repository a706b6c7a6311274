/*
 * Stands in for PyTorch's libc10_cuda.so in the CPU tests: the profiler
 * loads its bridge only when an object of that name is in the process.
 */
__attribute__((visibility("default"))) int fake_c10_cuda_present = 1;
