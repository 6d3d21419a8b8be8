# The runner library as a user gets it: firmware_stub built as a project of its own, installed,
# and examples/custom_runner built against the installation with find_package(mculab_runner), the
# way a TFLite Micro or ExecuTorch runner would be (docs/writing-a-runner.md). The result must run:
# with no workload and stdin closed, a runner sends HELLO and exits with status 2.
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P runner_package_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

run("configuring the library" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/firmware_stub -B ${WORK_DIR}/lib
    -DCMAKE_BUILD_TYPE=Release)
run("building the library" ${CMAKE_COMMAND} --build ${WORK_DIR}/lib -j 2)
run("installing the library" ${CMAKE_COMMAND} --install ${WORK_DIR}/lib --prefix ${WORK_DIR}/prefix)
foreach(f include/mculab/runner.h include/mculab/counters.h include/mculab_runner/port.h
          lib/cmake/mculab_runner/mculab_runnerConfig.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "the installation lacks ${f}")
  endif()
endforeach()
run("configuring the example against the installation" ${CMAKE_COMMAND}
    -S ${SOURCE_DIR}/examples/custom_runner -B ${WORK_DIR}/example
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run("building the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/example -j 2)
execute_process(COMMAND ${WORK_DIR}/example/mculab-example-runner-host
                INPUT_FILE /dev/null RESULT_VARIABLE rc OUTPUT_VARIABLE hello)
string(LENGTH "${hello}" hello_len)
if(NOT rc EQUAL 2 OR hello_len LESS 72)
  message(FATAL_ERROR "the example runner should send HELLO and exit 2 on a closed link: "
                      "status ${rc}, ${hello_len} bytes out")
endif()
message(STATUS "the runner package builds and runs a custom runner")
