# Run by ctest (install_consumer): installs the build tree into STAGE, then
# builds and runs a small consumer against the installed files, once
# through find_package(floxlog) (static and shared targets) and once
# through pkg-config.
#   cmake -DBUILD_DIR=... -DSTAGE=... -DSOURCE=... -DC_COMPILER=... -P install_consumer.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${STAGE}")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${STAGE}")

file(GLOB_RECURSE pcs "${STAGE}/*/floxlog.pc")
file(GLOB_RECURSE configs "${STAGE}/*/floxlogConfig.cmake")
file(GLOB_RECURSE headers "${STAGE}/*/floxlog.h")
file(GLOB_RECURSE cxx_headers "${STAGE}/*/floxlog.hpp")
file(GLOB_RECURSE statics "${STAGE}/*/libfloxlog.a")
file(GLOB_RECURSE sonames "${STAGE}/*/libfloxlog.so.0.2")
file(GLOB_RECURSE debuginfo "${STAGE}/*/libfloxlog.so.*.debug")
foreach(v pcs configs headers cxx_headers statics sonames debuginfo)
  list(LENGTH ${v} n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one installed file for ${v}, found: ${${v}}")
  endif()
endforeach()

# Stripped, with the debug info linked from the shared library.
find_program(OBJDUMP objdump)
if(OBJDUMP)
  run(${OBJDUMP} -h "${sonames}")
  if(NOT last_output MATCHES "gnu_debuglink" OR last_output MATCHES "debug_info")
    message(FATAL_ERROR "installed libfloxlog.so is not stripped with a debuglink:\n${last_output}")
  endif()
endif()

# CMake package.
run(${CMAKE_COMMAND} -S "${SOURCE}" -B "${STAGE}/consumer-build"
    "-DCMAKE_PREFIX_PATH=${STAGE}" "-DCMAKE_C_COMPILER=${C_COMPILER}")
run(${CMAKE_COMMAND} --build "${STAGE}/consumer-build")
foreach(exe consumer_static consumer_shared)
  run("${STAGE}/consumer-build/${exe}")
  if(NOT last_output MATCHES "consumer ok")
    message(FATAL_ERROR "${exe} printed: ${last_output}")
  endif()
endforeach()

# pkg-config.
get_filename_component(pcdir "${pcs}" DIRECTORY)
get_filename_component(libdir "${sonames}" DIRECTORY)
find_program(PKG_CONFIG pkg-config REQUIRED)
run(${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pcdir}" ${PKG_CONFIG} --cflags --libs floxlog)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c11 -Wall -Wextra -Werror "${SOURCE}/consumer.c" ${flags}
    "-Wl,-rpath,${libdir}" -o "${STAGE}/consumer_pc")
run("${STAGE}/consumer_pc")
if(NOT last_output MATCHES "consumer ok")
  message(FATAL_ERROR "pkg-config consumer printed: ${last_output}")
endif()
message(STATUS "install tree usable through find_package and pkg-config")
