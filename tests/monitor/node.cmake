# `railkit monitor node` (monitor/node): unit tests on a generated fixture node (node_fixture.py) and
# a stand-in NVML, and the real command on a fixture whose counters advance (node_cli.py).
if(NOT TARGET railkit::monitor_node)
  return()
endif()
set(MON_NODE_FIXTURE ${CMAKE_CURRENT_BINARY_DIR}/node-fixture)
add_custom_command(
  OUTPUT ${MON_NODE_FIXTURE}/.stamp
  COMMAND ${RAILKIT_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/node_fixture.py --out ${MON_NODE_FIXTURE}
  COMMAND ${CMAKE_COMMAND} -E touch ${MON_NODE_FIXTURE}/.stamp
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/node_fixture.py ${PROJECT_SOURCE_DIR}/tests/fixtures/sysfs/gen_sysfs.py
  COMMENT "Generating the fixture node of the monitor tests"
  VERBATIM)
add_custom_target(monitor_node_fixture DEPENDS ${MON_NODE_FIXTURE}/.stamp)

if(RAILKIT_UNIT_TESTS)
  # A stand-in NVML (C, loaded with dlopen by the node monitor's GPU source).
  add_library(monitor_fake_nvml MODULE fake_nvml_node.c)
  railkit_unit_tests(monitor_node_tests "monitor." LIBS railkit::monitor_node
    SOURCES node_sources_test.cpp node_rates_test.cpp node_gpu_http_test.cpp
    DEFINITIONS RAILKIT_MON_FAKE_NVML="$<TARGET_FILE:monitor_fake_nvml>" RAILKIT_MON_FIXTURE="${MON_NODE_FIXTURE}")
  add_dependencies(monitor_node_tests monitor_fake_nvml monitor_node_fixture)
  railkit_case_script(node_cli.py monitor.node NO_BENCH LABELS cli TIMEOUT 60 --fake-nvml $<TARGET_FILE:monitor_fake_nvml>)
endif()
