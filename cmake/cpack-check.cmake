# CPACK_PROJECT_CONFIG_FILE: run by cpack before it packs (cmake/package.cmake).
# The binaries name the guides of the prefix the build was configured with;
# a package installs them under its own prefix.
if(CPACK_GENERATOR STREQUAL "DEB" AND
   NOT CPACK_GMEMPROF_DOCDIR STREQUAL "${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/gmemprof")
  message(WARNING "gmemprof: this build was configured for the guides in ${CPACK_GMEMPROF_DOCDIR}, "
          "but the package puts them in ${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/gmemprof: its "
          "--help and man pages would name the wrong place. Configure the package's build with "
          "-DCMAKE_INSTALL_PREFIX=${CPACK_PACKAGING_INSTALL_PREFIX}.")
endif()
