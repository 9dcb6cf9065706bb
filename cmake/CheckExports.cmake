# cmake -DLIBRARY=<shared object> -DEXPECTED="a;b;c" -P CheckExports.cmake
# Fails unless the library's defined dynamic symbols are exactly EXPECTED (the interposer
# must export cuBLAS's entry points and nothing of its private ozaki and Kokkos).
find_program(NM nm REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only --format=posix ${LIBRARY}
  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ ]+) ([A-Za-z]) ")
    set(name ${CMAKE_MATCH_1})
    set(kind ${CMAKE_MATCH_2})
    # Linker-made markers (version nodes) are not functions.
    if(NOT kind STREQUAL "A")
      list(APPEND found ${name})
    endif()
  endif()
endforeach()
list(SORT found)
set(want ${EXPECTED})
list(SORT want)
if(NOT found STREQUAL want)
  message(FATAL_ERROR "${LIBRARY} exports [${found}], expected [${want}]")
endif()
message(STATUS "${LIBRARY} exports exactly: ${found}")
