# The Debian package: `cpack -G DEB` in the build tree (or
# `cmake --build build --target package`) writes gmemprof_VERSION_ARCH.deb
# holding what cmake/install.cmake installs, under /usr.
# Depends: computed by dpkg-shlibdeps where it is installed (dpkg-dev), else
# libc6 and libzstd1 as listed here. CUDA and CUPTI are not dependencies:
# libgmemprof.so loads them at run time from the program it profiles or the
# NVIDIA driver and toolkit packages, which do not come from Debian.
set(GMEMPROF_DEB_MAINTAINER "gmemprof maintainers <gmemprof@localhost>"
    CACHE STRING "The Maintainer field of the .deb")

set(CPACK_PACKAGE_NAME gmemprof)
set(CPACK_PACKAGE_VENDOR gmemprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GMEMPROF_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU memory profiler: record CUDA memory activity, rank what used it")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GMEMPROF_DEB_MAINTAINER}")
find_program(GMP_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(GMP_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libzstd1")
endif()
# The long description; CPack indents it for the control file.
if(TARGET gmemprof)
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
      "gmemprof runs a command with libgmemprof.so injected through CUDA_INJECTION64_PATH\n"
      "and writes a zstd trace of its GPU allocations, frees, kernels and copies.\n"
      "gmem-analyze ranks, diffs and exports such traces.\n"
      "\n"
      "At run time the profiler needs the NVIDIA driver and CUPTI (CUDA 13, from\n"
      "NVIDIA's packages or the profiled program's own, e.g. PyTorch's wheels).")
else()
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
      "gmem-analyze ranks, diffs and exports gmemprof traces. This build has no\n"
      "profiler: it was configured without the CUDA toolkit.")
endif()
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION ${CPACK_DEBIAN_PACKAGE_DESCRIPTION})
include(CPack)
