# The CPU kernels (host/cpu/cpu_engine_impl.hpp) are compiled once per instruction set, each set in
# kIsaParts translation units (host/cpu/cpu_isa.hpp) generated from host/cpu/cpu_isa_unit.cpp.in, so that
# no unit instantiates the whole learner registry; host/cpu/cpu_engine.cpp dispatches at run time to the
# best set this CPU supports.
#
#   DPREGRET_CPU_ISAS = all      avx512, avx2 and generic (x86-64; other CPUs: generic): runs on any x86-64
#                       native   only the best set of the build machine (scripts/quickstart.sh: a first build
#                                in a third of the time); the binary then refuses a CPU without that set
#                       a list   e.g. "avx2;generic"
set(DPREGRET_CPU_ISAS all CACHE STRING "CPU kernel instruction sets: all, native, or a list of avx512;avx2;generic")

function(dpregret_cpu_isa_units target)
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set(isas generic)
  elseif(DPREGRET_CPU_ISAS STREQUAL "all")
    set(isas avx512 avx2 generic)
  elseif(DPREGRET_CPU_ISAS STREQUAL "native")
    try_run(run_rc compile_ok ${CMAKE_BINARY_DIR}/best_isa SOURCES ${CMAKE_SOURCE_DIR}/cmake/best_isa.cpp
            RUN_OUTPUT_VARIABLE isas)
    string(STRIP "${isas}" isas)
    if(NOT compile_ok OR NOT run_rc EQUAL 0 OR NOT isas MATCHES "^(avx512|avx2|generic)$")
      message(FATAL_ERROR "DPREGRET_CPU_ISAS=native: could not detect this CPU's instruction set (got '${isas}')")
    endif()
  else()
    set(isas ${DPREGRET_CPU_ISAS})
    foreach(isa IN LISTS isas)
      if(NOT isa MATCHES "^(avx512|avx2|generic)$")
        message(FATAL_ERROR "DPREGRET_CPU_ISAS: '${isa}' is not one of avx512, avx2, generic (or use all / native)")
      endif()
    endforeach()
  endif()
  message(STATUS "dpregret: CPU kernels for ${isas} (DPREGRET_CPU_ISAS=${DPREGRET_CPU_ISAS})")

  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/host/cpu/cpu_isa.hpp)
  file(STRINGS ${CMAKE_SOURCE_DIR}/host/cpu/cpu_isa.hpp parts_line REGEX "kIsaParts = [0-9]+;")
  string(REGEX MATCH "kIsaParts = ([0-9]+)" parts_line "${parts_line}")
  set(DPR_PARTS ${CMAKE_MATCH_1})
  math(EXPR last_part "${DPR_PARTS} - 1")

  # g++'s avx512fintrin.h builds its intrinsics on _mm512_undefined_*() (`__m512 __Y = __Y;`), which
  # -Wuninitialized reports thousands of times (a false positive of the header, GCC bug 105593); silenced for
  # the AVX-512 units only, so that real warnings stay visible: the same kernel code is compiled with the
  # warnings on for avx2 and generic.
  set(flags_avx512 -march=x86-64-v4)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND flags_avx512 -Wno-uninitialized -Wno-maybe-uninitialized)
  endif()
  set(flags_avx2 -march=x86-64-v3)
  set(flags_generic "")

  set(defs "")
  foreach(DPR_ISA IN LISTS isas)
    string(TOUPPER ${DPR_ISA} upper)
    list(APPEND defs DPREGRET_CPU_ISA_${upper}=1)
    foreach(DPR_PART RANGE ${last_part})
      set(unit ${DPREGRET_GENERATED_DIR}/cpu_isa/${DPR_ISA}_${DPR_PART}.cpp)
      configure_file(${CMAKE_SOURCE_DIR}/host/cpu/cpu_isa_unit.cpp.in ${unit} @ONLY)
      target_sources(${target} PRIVATE ${unit})
      set_source_files_properties(${unit} PROPERTIES COMPILE_OPTIONS "${flags_${DPR_ISA}}")
    endforeach()
  endforeach()
  set_source_files_properties(${CMAKE_SOURCE_DIR}/host/cpu/cpu_engine.cpp PROPERTIES COMPILE_DEFINITIONS "${defs}")
endfunction()
