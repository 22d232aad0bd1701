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
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}")
  if("concurrency" IN_LIST T_LABELS)
    add_dependencies(taxel_concurrency_tests ${T_NAME})
  endif()
endfunction()
