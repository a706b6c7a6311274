# What `cmake --install BUILD --prefix P` puts in place (GNUInstallDirs):
#   bin/gmemprof, bin/gmem-analyze
#   libexec/gmemprof/libgmemprof.so, and the PyTorch bridge beside it: a
#     library injected by path, never linked, so a private directory (not
#     the linker's LIBDIR, which wants a versioned SONAME and ldconfig)
#   include/gmemprof/gmemprof.h, share/pkgconfig/gmemprof.pc (the API is a
#     header: nothing in it depends on the architecture),
#   LIBDIR/cmake/gmemprof/ (find_package(gmemprof): gmemprof::gmemprof)
#   share/man/man1/{gmemprof,gmem-analyze}.1.gz
#   share/bash-completion/completions/{gmemprof,gmem-analyze} (completion/)
#   share/doc/gmemprof/: the guides (docs/*.md, docs/img) and the
#     licence (copyright: LICENSE in Debian's machine-readable form)
# Included at the end of the top-level CMakeLists.txt: the targets of every
# folder exist by then. The launcher finds the library in libexec/gmemprof
# relative to its own bin/ (GMEMPROF_LIBDIR, profiler/launcher.c).
include(CMakePackageConfigHelpers)
# Directories 0755 whatever the umask of who installs or packs.
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

set(GMP_PRIVATE_LIBDIR ${CMAKE_INSTALL_LIBEXECDIR}/gmemprof)
install(TARGETS gmem-analyze RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET gmemprof_launcher)
  target_compile_definitions(gmemprof_launcher PRIVATE GMEMPROF_LIBDIR="${GMP_PRIVATE_LIBDIR}")
  install(TARGETS gmemprof_launcher RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET gmemprof)
  install(TARGETS gmemprof LIBRARY DESTINATION ${GMP_PRIVATE_LIBDIR})
endif()
if(TARGET gmemprof_torch)
  install(TARGETS gmemprof_torch LIBRARY DESTINATION ${GMP_PRIVATE_LIBDIR})
endif()

# The in-app API: a header whose calls find the profiler with dlsym, so a
# program links only libdl, never the profiler.
add_library(gmemprof_api INTERFACE)
target_include_directories(gmemprof_api INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(gmemprof_api INTERFACE ${CMAKE_DL_LIBS})
set_target_properties(gmemprof_api PROPERTIES EXPORT_NAME gmemprof)
add_library(gmemprof::gmemprof ALIAS gmemprof_api)
install(TARGETS gmemprof_api EXPORT gmemprofTargets)
install(FILES ${PROJECT_SOURCE_DIR}/include/gmemprof/gmemprof.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gmemprof)

set(GMP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gmemprof)
install(EXPORT gmemprofTargets NAMESPACE gmemprof:: DESTINATION ${GMP_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gmemprofConfig.cmake.in
  ${CMAKE_BINARY_DIR}/gmemprofConfig.cmake
  INSTALL_DESTINATION ${GMP_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR GMP_PRIVATE_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/gmemprofConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/gmemprofConfig.cmake ${CMAKE_BINARY_DIR}/gmemprofConfigVersion.cmake
        DESTINATION ${GMP_CMAKE_DIR})

# pkg-config: the prefix relative to the .pc file, so the installed tree can
# be moved (and --prefix at install time needs no reconfigure).
file(RELATIVE_PATH GMP_PC_TO_PREFIX /P/${CMAKE_INSTALL_DATADIR}/pkgconfig /P)
string(REGEX REPLACE "/$" "" GMP_PC_TO_PREFIX "${GMP_PC_TO_PREFIX}")
set(GMP_PC_LIBS)
foreach(l ${CMAKE_DL_LIBS})
  string(APPEND GMP_PC_LIBS " -l${l}")
endforeach()
string(STRIP "${GMP_PC_LIBS}" GMP_PC_LIBS)
configure_file(${CMAKE_CURRENT_LIST_DIR}/gmemprof.pc.in ${CMAKE_BINARY_DIR}/gmemprof.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/gmemprof.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)

install(FILES ${GMP_MAN_PAGES_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The guides that --help and the man pages name (GMEMPROF_DOCDIR), and the
# licence (LICENSE in the form Debian reads, cmake/copyright).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# bash completion, found by the bash-completion package under the tool's name
set(GMP_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${PROJECT_SOURCE_DIR}/completion/gmem-analyze.bash
        DESTINATION ${GMP_COMPLETION_DIR} RENAME gmem-analyze)
if(TARGET gmemprof_launcher)
  install(FILES ${PROJECT_SOURCE_DIR}/completion/gmemprof.bash
          DESTINATION ${GMP_COMPLETION_DIR} RENAME gmemprof)
endif()
