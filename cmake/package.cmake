# The Debian package: `cpack -G DEB` in the build tree (or
# `cmake --build build --target package`) writes gmemprof_VERSION_ARCH.deb
# holding what cmake/install.cmake installs, under /usr. Configure its build
# with -DCMAKE_INSTALL_PREFIX=/usr: --help and the man pages name the guides
# of the configured prefix (GMEMPROF_DOCDIR); cpack warns when they differ.
# Depends: computed by dpkg-shlibdeps where it is installed (dpkg-dev), else
# libc6 and libzstd1 as listed here. CUDA and CUPTI are not dependencies:
# libgmemprof.so loads them at run time from the program it profiles or the
# NVIDIA driver and toolkit packages, which do not come from Debian.
# Checked by tests/install/deb_test.sh, with lintian where it is installed.
set(GMEMPROF_DEB_MAINTAINER "The gmemprof authors <gmemprof@example.org>" CACHE STRING
    "The Maintainer field of the .deb and its changelog: the packager's name and address")
# A build tree configured when the default had no domain keeps that value in
# its cache: take the current default instead (a packager's own is kept).
if(GMEMPROF_DEB_MAINTAINER STREQUAL "gmemprof maintainers <gmemprof@localhost>")
  set(GMEMPROF_DEB_MAINTAINER "The gmemprof authors <gmemprof@example.org>" CACHE STRING
      "The Maintainer field of the .deb and its changelog: the packager's name and address" FORCE)
endif()
if(NOT GMEMPROF_DEB_MAINTAINER MATCHES "^[^<>]+ <[^@<>]+@[^@<>]+\\.[^@<>]+>$")
  message(WARNING "GMEMPROF_DEB_MAINTAINER is '${GMEMPROF_DEB_MAINTAINER}', not 'Name <user@host.domain>': "
          "lintian rejects such a .deb (bogus-mail-host). Set it to the packager's name and address.")
endif()

# A native package's changelog (usr/share/doc/gmemprof/changelog.gz, which
# Debian requires), gzip -9n as Debian wants: no name, no time in the header.
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${CMAKE_BINARY_DIR}/changelog @ONLY)
find_program(GMP_GZIP gzip)
if(GMP_GZIP)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/changelog.gz
    COMMAND sh -c "\"$0\" -9nc \"$1\" >\"$1.gz\" || { rm -f \"$1.gz\"; exit 1; }" ${GMP_GZIP}
            ${CMAKE_BINARY_DIR}/changelog
    DEPENDS ${CMAKE_BINARY_DIR}/changelog
    VERBATIM)
  add_custom_target(gmp_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/changelog.gz)
  install(FILES ${CMAKE_BINARY_DIR}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
else()
  install(FILES ${CMAKE_BINARY_DIR}/changelog DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()

set(CPACK_PACKAGE_NAME gmemprof)
set(CPACK_PACKAGE_VENDOR gmemprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GMEMPROF_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU memory profiler: record CUDA memory activity, rank what used it")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GMEMPROF_DEB_MAINTAINER}")
# The control files' modes as Debian wants them (0644, scripts 0755).
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
find_program(GMP_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(GMP_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libzstd1")
endif()
# The long description, lines of at most 80 columns; CPack indents it for
# the control file.
if(TARGET gmemprof)
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
      "gmemprof runs a command with libgmemprof.so injected through\n"
      "CUDA_INJECTION64_PATH and writes a zstd trace of its GPU allocations,\n"
      "frees, kernels and copies. gmem-analyze ranks, diffs and exports such\n"
      "traces.\n"
      "\n"
      "At run time the profiler needs the NVIDIA driver and CUPTI (CUDA 13, from\n"
      "NVIDIA's packages or the profiled program's own, e.g. PyTorch's wheels).")
else()
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
      "gmem-analyze ranks, diffs and exports gmemprof traces. This build has no\n"
      "profiler: it was configured without the CUDA toolkit.")
endif()
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION ${CPACK_DEBIAN_PACKAGE_DESCRIPTION})
# Read at cpack time (cmake/cpack-check.cmake): the guides' directory the
# binaries name, to compare with where the package puts them.
set(CPACK_GMEMPROF_DOCDIR "${CMAKE_INSTALL_FULL_DOCDIR}")
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack-check.cmake)
include(CPack)
