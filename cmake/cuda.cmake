# GMEMPROF_CUDA: whether the parts that need the CUDA toolkit's headers and
# libraries are built: libgmemprof.so, the gmemprof launcher, the CUDA C
# samples and their tests. The analyzer (gmem-analyze, gmem-synth and their
# tests) needs only zstd and is always built.
#   AUTO (default)  build them when find_package(CUDAToolkit) succeeds
#   ON              the CUDA toolkit is required
#   OFF             do not look for it
# Point CMake at a toolkit elsewhere with -DCUDAToolkit_ROOT=DIR. To check the
# analyzer-only build on a machine that has CUDA, configure with
# -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON (what CI does) or GMEMPROF_CUDA=OFF.
set(GMEMPROF_CUDA AUTO CACHE STRING "Build the profiler, launcher and samples: AUTO, ON or OFF")
set_property(CACHE GMEMPROF_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${GMEMPROF_CUDA}" _gmp_cuda)
if(_gmp_cuda STREQUAL "ON")
  find_package(CUDAToolkit REQUIRED)
elseif(_gmp_cuda STREQUAL "AUTO")
  find_package(CUDAToolkit QUIET)
elseif(NOT _gmp_cuda STREQUAL "OFF")
  message(FATAL_ERROR "GMEMPROF_CUDA is '${GMEMPROF_CUDA}': use AUTO, ON or OFF")
endif()
if(CUDAToolkit_FOUND AND NOT _gmp_cuda STREQUAL "OFF")
  set(GMEMPROF_HAVE_CUDA ON)
else()
  set(GMEMPROF_HAVE_CUDA OFF)
  if(_gmp_cuda STREQUAL "OFF")
    set(_gmp_why "GMEMPROF_CUDA=OFF")
  else()
    set(_gmp_why "no CUDA toolkit found (set CUDAToolkit_ROOT, or GMEMPROF_CUDA=ON to require it)")
  endif()
  message(STATUS "gmemprof: ${_gmp_why}: building the analyzer only; left out: "
                 "libgmemprof.so, the gmemprof launcher, the samples and their tests")
endif()
