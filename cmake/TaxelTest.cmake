# taxel_add_test(NAME <name> SOURCES <files...> LIBS <libs...> [LABELS <labels...>])
# One macro declares every test: a GoogleTest executable registered with CTest.
include(GoogleTest)
function(taxel_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} taxel_test_support GTest::gtest GTest::gmock GTest::gtest_main taxel_options)
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}")
endfunction()
