# Helpers for ozaki's own build.
include(CMakePackageConfigHelpers)

# Installs ozakiConfig.cmake, its version file and the exported targets, so that a downstream
# project can write find_package(ozaki) and link ozaki::ozaki.
function(ozaki_install_package_config)
  set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ozaki)
  install(EXPORT ozakiTargets NAMESPACE ozaki:: DESTINATION ${config_dir})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ozakiConfig.cmake.in
    ${PROJECT_BINARY_DIR}/ozakiConfig.cmake INSTALL_DESTINATION ${config_dir})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/ozakiConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/ozakiConfig.cmake ${PROJECT_BINARY_DIR}/ozakiConfigVersion.cmake
    DESTINATION ${config_dir})
endfunction()

# The execution spaces this Kokkos build has, each with the C++ name tests compile against.
# "serial" is Kokkos::Serial (not to be confused with the serial oracle backend, which is not
# an execution space and is what every space is compared with).
function(ozaki_test_spaces out_names out_types)
  set(names "")
  set(types "")
  if(Kokkos_ENABLE_SERIAL)
    list(APPEND names serial)
    list(APPEND types Kokkos::Serial)
  endif()
  if(Kokkos_ENABLE_OPENMP)
    list(APPEND names openmp)
    list(APPEND types Kokkos::OpenMP)
  endif()
  if(Kokkos_ENABLE_CUDA)
    list(APPEND names cuda)
    list(APPEND types Kokkos::Cuda)
  endif()
  set(${out_names} "${names}" PARENT_SCOPE)
  set(${out_types} "${types}" PARENT_SCOPE)
endfunction()

# Labels a test that runs on Kokkos' default execution space: "device" where that is CUDA (the
# GPU machine runs it), "host" otherwise (CI runs it).
function(ozaki_label_default_space_test test)
  if(Kokkos_ENABLE_CUDA)
    set_tests_properties(${test} PROPERTIES LABELS device)
  else()
    set_tests_properties(${test} PROPERTIES LABELS host)
  endif()
endfunction()
