# CONVTUNE_SANITIZE=ON: everything built with AddressSanitizer (with
# LeakSanitizer) and UndefinedBehaviorSanitizer; any UB aborts, so it fails the
# test instead of printing and going on. With clang the library is also
# instrumented for libFuzzer and the parser fuzzers (tests/fuzz) are built.
# Code that convtune generates is compiled by `cc` without sanitizers.
option(CONVTUNE_SANITIZE "Build with ASan + UBSan (and the libFuzzer targets with clang)" OFF)
set(CONVTUNE_FUZZ OFF)
if(CONVTUNE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1)
  # Line tables are all a sanitizer report's stack needs; full -g doubles the
  # compile time of this build (clang; GCC keeps -g).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_compile_options(-gline-tables-only)
  else()
    add_compile_options(-g)
  endif()
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Coverage for libFuzzer on the library the fuzzers link (CMakeLists.txt),
    # not on the tests' own code, where it only cost compile time.
    set(CONVTUNE_FUZZ ON)
  else()
    message(STATUS "fuzzers: not built (they need clang: configure with CXX=clang++)")
  endif()
endif()
