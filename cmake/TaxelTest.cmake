# taxel_add_test(NAME <name> SOURCES <files...> LIBS <libs...> [LABELS <labels...>])
# One macro declares every test: a GoogleTest executable registered with CTest.
# A test labelled `concurrency` is also a dependency of the target taxel_concurrency_tests, so that
# the TSan build (scripts/sanitizers.sh tsan) compiles only what `ctest -L concurrency` runs.
include(GoogleTest)
if(NOT TARGET taxel_concurrency_tests)
  add_custom_target(taxel_concurrency_tests)
endif()
function(taxel_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} taxel_test_support GTest::gtest GTest::gmock GTest::gtest_main taxel_options)
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60)
  # The labels are set once the tests are known (<name>_TESTS, from the file gtest_discover_tests
  # included just before): its PROPERTIES would pass a list of labels on as separate arguments in
  # CMake 3.25, and only the first label would stick.
  if(T_LABELS)
    set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_labels.cmake)
    file(WRITE ${labels_file} "if(${T_NAME}_TESTS)\n"
                              "  set_tests_properties(\${${T_NAME}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\n"
                              "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
  endif()
  if("concurrency" IN_LIST T_LABELS)
    add_dependencies(taxel_concurrency_tests ${T_NAME})
  endif()
endfunction()
