# CTest driver: installs this build of ozaki, builds docs/example against the install as a
# downstream project would (find_package(ozaki) with only ozaki_ROOT given, as the README
# says), and runs it.  Inputs: OZAKI_BUILD_DIR, EXAMPLE_DIR, WORK_DIR, CXX.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${OZAKI_BUILD_DIR} --prefix ${WORK_DIR}/install)
# A clean environment: no Kokkos_ROOT or CMAKE_PREFIX_PATH of the caller's may help.
unset(ENV{Kokkos_ROOT})
unset(ENV{KokkosKernels_ROOT})
unset(ENV{CMAKE_PREFIX_PATH})
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} -Dozaki_ROOT=${WORK_DIR}/install)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/ozaki_example)
