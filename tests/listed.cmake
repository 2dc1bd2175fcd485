# sendat_listed_tests(SRC OUT): OUT gets the names of the cmocka tests SRC defines (each line
# "test_NAME(void **..." starts one), in the order written. Configuring fails when one of them
# is missing from SRC's table (a cmocka_unit_test...(test_NAME entry), so a test cannot be
# written and never run: SRC is a configure dependency, so editing it configures again, and
# `cmake --build` stops there. (A table entry without its function fails the compile.)
function(sendat_listed_tests src out)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(STRINGS ${src} defs REGEX "^test_[A-Za-z0-9_]+\\(void \\*\\*")
  file(READ ${src} text)
  set(names)
  foreach(line IN LISTS defs)
    string(REGEX MATCH "^test_[A-Za-z0-9_]+" name "${line}")
    if(NOT text MATCHES "cmocka_unit_test[a-z_]*\\([ \t\r\n]*${name}[ \t\r\n]*[,)]")
      message(FATAL_ERROR "${src}: ${name} is defined but not in main()'s cmocka table, "
                          "so it would never run: list it there")
    endif()
    list(APPEND names ${name})
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
