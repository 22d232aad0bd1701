# TAXEL_SANITIZE: build every target of this tree with a sanitizer (scripts/sanitizers.sh,
# `make test-asan`, `make test-tsan`; that script configures with clang, but gcc works too).
#
#   ""                   off (the default)
#   "address,undefined"  AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer
#   "thread"             ThreadSanitizer
#
# The flags are global (add_compile_options/add_link_options before any add_subdirectory), not on
# taxel_options: the protoc-generated taxel_proto and the tests' health stubs do not link
# taxel_options, yet they read and write our messages, so they are instrumented too, and every
# executable links the sanitizer runtime (taxel-server included: the Python, Node, CLI and
# shutdown tests then run the sanitized server). The Debian gRPC/protobuf/abseil libraries stay
# uninstrumented; scripts/sanitizers/*.supp lists, with a reason each, what that costs.
#
# UBSan stops at the first report (-fno-sanitize-recover=all), so a report fails the test, as
# ASan and TSan do. -O2, not the usual -O1: clang's -O1 leaves Eigen's fixed-size expression
# templates uninlined, and the brute-force mesh tests then ran 50x slower than in Release (-O2
# runs them ~5x faster than -O1 for the same compile time); -g and the frame pointers keep the
# reports' stacks complete, inlined frames included.
set(TAXEL_SANITIZE "" CACHE STRING "Sanitizers: \"\" (off), \"address,undefined\" or \"thread\"")
set_property(CACHE TAXEL_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

if(TAXEL_SANITIZE STREQUAL "")
  return()
endif()
if(NOT TAXEL_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
  message(FATAL_ERROR "TAXEL_SANITIZE=\"${TAXEL_SANITIZE}\": expected \"\", \"address,undefined\" or \"thread\"")
endif()
if(TAXEL_FUZZ)
  message(FATAL_ERROR "TAXEL_SANITIZE and TAXEL_FUZZ: the fuzz build has its own sanitizers; use a separate build dir")
endif()
if(TAXEL_NATIVE)
  message(WARNING "TAXEL_SANITIZE with TAXEL_NATIVE: the sanitized binaries only run on this CPU")
endif()
message(STATUS "Sanitizers: ${TAXEL_SANITIZE} (${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION})")

add_compile_options(-fsanitize=${TAXEL_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O2)
add_link_options(-fsanitize=${TAXEL_SANITIZE})

# TSan only, once all directories are configured (a deferred call that walks every target):
#
# 1. Every executable links scripts/sanitizers/tsan_absl_sync.cc, which shows TSan the
#    absl::Mutex/CondVar that Debian's uninstrumented gRPC synchronises its threads with (see that
#    file); without it each gRPC test reports thousands of races between gRPC's own threads.
#
# 2. __attribute__((target_clones)): the clones' ifunc resolver runs while the dynamic loader
#    relocates the executable, before the TSan runtime is initialised, and the instrumented
#    resolver's first act, __tsan_func_entry, then segfaults (gcc 12 and clang 14 alike; the
#    symptom is a test executable that dies with SIGSEGV in "<function>.resolver" when CMake lists
#    its tests). no_sanitize cannot be combined with target_clones, so every source file that
#    mentions them is compiled without TSan's function entry/exit hooks: its loads and stores are
#    still checked for races, only its functions are missing from the reports' stacks.
function(_taxel_tsan_walk dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY" OR t STREQUAL "taxel_tsan_absl_sync")
      continue()
    endif()
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${t} PRIVATE taxel_tsan_absl_sync)
    endif()
    get_target_property(sources ${t} SOURCES)
    foreach(s ${sources})
      if(NOT IS_ABSOLUTE ${s})
        set(s ${dir}/${s})
      endif()
      if(NOT s MATCHES "\\.(cc|cpp)$" OR NOT EXISTS ${s})
        continue()
      endif()
      file(STRINGS ${s} clones REGEX "target_clones")
      if(clones)
        message(STATUS "Sanitizers: ${s} mentions target_clones: no TSan function entry/exit hooks")
        if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
          set(flag -mllvm -tsan-instrument-func-entry-exit=0)  # two words: SHELL: is for targets only
        else()
          set(flag "--param=tsan-instrument-func-entry-exit=0")
        endif()
        set_property(SOURCE ${s} DIRECTORY ${dir} APPEND PROPERTY COMPILE_OPTIONS ${flag})
      endif()
    endforeach()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d ${subdirs})
    _taxel_tsan_walk(${d})
  endforeach()
endfunction()
function(_taxel_tsan_finish)
  add_library(taxel_tsan_absl_sync OBJECT ${PROJECT_SOURCE_DIR}/scripts/sanitizers/tsan_absl_sync.cc)
  target_link_libraries(taxel_tsan_absl_sync PRIVATE absl::synchronization taxel_options)
  _taxel_tsan_walk(${PROJECT_SOURCE_DIR})
endfunction()
if(TAXEL_SANITIZE STREQUAL "thread")
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _taxel_tsan_finish)
endif()
