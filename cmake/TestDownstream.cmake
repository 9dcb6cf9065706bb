# CTest driver: installs this build of ozaki, builds docs/example against the install as a
# downstream project would (find_package(ozaki) with ozaki_ROOT, and Kokkos_ROOT and
# KokkosKernels_ROOT naming the Kokkos ozaki was built with, as the README says), and runs it.
# Inputs: OZAKI_BUILD_DIR, EXAMPLE_DIR, WORK_DIR, CXX, KOKKOS_ROOT, KOKKOSKERNELS_ROOT;
# FORBIDDEN: paths of this machine that no installed CMake file or header may name (the
# source and build folders, Kokkos' prefix); MOVE=ON: the prefix is moved to another folder
# after the install, before the example is configured (a relocatable package).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/install)
run(${CMAKE_COMMAND} --install ${OZAKI_BUILD_DIR} --prefix ${prefix})

# The package's files name no path of this machine: everything is relative to the prefix,
# and the dependencies are found on the user's paths.
file(GLOB_RECURSE installed LIST_DIRECTORIES false ${prefix}/*.cmake ${prefix}/include/*)
list(APPEND FORBIDDEN ${prefix})
foreach(file IN LISTS installed)
  file(READ ${file} text)
  foreach(path IN LISTS FORBIDDEN)
    string(FIND "${text}" "${path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names ${path}: the installed package is not relocatable")
    endif()
  endforeach()
endforeach()

if(MOVE)
  set(moved ${WORK_DIR}/elsewhere/ozaki)
  file(MAKE_DIRECTORY ${WORK_DIR}/elsewhere)
  file(RENAME ${prefix} ${moved})
  set(prefix ${moved})
endif()

# A clean environment: no Kokkos_ROOT or CMAKE_PREFIX_PATH of the caller's may help.
unset(ENV{Kokkos_ROOT})
unset(ENV{KokkosKernels_ROOT})
unset(ENV{CMAKE_PREFIX_PATH})
unset(ENV{ozaki_ROOT})
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} -Dozaki_ROOT=${prefix} -DKokkos_ROOT=${KOKKOS_ROOT}
    -DKokkosKernels_ROOT=${KOKKOSKERNELS_ROOT})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/ozaki_example)
