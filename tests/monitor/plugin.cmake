# The NCCL profiler plugin (monitor/plugin): its ABI declarations against NCCL 2.28.9's numbers, and
# the built libnccl-profiler-railkit.so loaded with dlopen and driven as NCCL 2.28 drives it
# (monitor_plugin_drive: 8 ranks as threads, a delayed rank, a slow NIC, a hung communicator).
# The driver is built in both sets: the lead runs `railkit monitor judge` on its output.
add_executable(monitor_plugin_drive plugin_drive.cpp plugin_drive_main.cpp)
railkit_configure_target(monitor_plugin_drive)
find_package(Threads REQUIRED)
target_link_libraries(monitor_plugin_drive PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(monitor_plugin_drive railkit_profiler_plugin)

# The driven cases time real sleeps of 8 threads (late starts, NIC busy time): they run alone
# (RUN_SERIAL), so that parallel tests on a 2-core machine do not add ms of scheduling jitter.
if(RAILKIT_UNIT_TESTS)
  railkit_gtest_program(monitor_plugin_tests "monitor." LIBS nlohmann_json::nlohmann_json LABELS unit
    SOURCES plugin_abi_layout_test.cpp plugin_old_abi_test.cpp plugin_test.cpp
    DEFINITIONS RAILKIT_PROFILER_PLUGIN_PATH="$<TARGET_FILE:railkit_profiler_plugin>"
                RAILKIT_PLUGIN_DRIVE="$<TARGET_FILE:monitor_plugin_drive>"
    PROPERTIES RUN_SERIAL TRUE)
endif()
if(TARGET monitor_plugin_tests)
  add_dependencies(monitor_plugin_tests railkit_profiler_plugin monitor_plugin_drive)
endif()

# The overhead benchmark (not a test): scripts/perf/monitor_plugin_overhead.sh runs it.
find_package(benchmark QUIET)
if(benchmark_FOUND AND RAILKIT_BUILD_BENCHMARKS)
  add_executable(monitor_plugin_bench plugin_bench.cpp plugin_drive.cpp)
  railkit_configure_target(monitor_plugin_bench)
  target_link_libraries(monitor_plugin_bench PRIVATE benchmark::benchmark ${CMAKE_DL_LIBS} Threads::Threads)
  target_compile_definitions(monitor_plugin_bench PRIVATE
    RAILKIT_PROFILER_PLUGIN_PATH="$<TARGET_FILE:railkit_profiler_plugin>")
  add_dependencies(monitor_plugin_bench railkit_profiler_plugin)
endif()

# The plugin's windows judged by the real `railkit monitor judge`: the late rank, the slow NIC and the
# hung communicator named from what the plugin wrote (integration set: it runs the built programs).
railkit_case_script(plugin_judge.py monitor.plugin_judge NO_BENCH SERIAL LABELS monitor TIMEOUT 120
                    --drive $<TARGET_FILE:monitor_plugin_drive> --so $<TARGET_FILE:railkit_profiler_plugin>)

# The simulator feeding the plugin the events NCCL would (integration set: the sanitizer build has no ns-3).
if(RAILKIT_HAVE_NS3 AND RAILKIT_INTEGRATION_TESTS)
  railkit_gtest_program(monitor_sim_feed_tests "monitor." LIBS railkit::sim nlohmann_json::nlohmann_json
    ${CMAKE_DL_LIBS} Threads::Threads LABELS sim SOURCES sim_feed_test.cpp plugin_drive.cpp
    DEFINITIONS RAILKIT_PROFILER_PLUGIN_PATH="$<TARGET_FILE:railkit_profiler_plugin>"
                RAILKIT_SIM_EXAMPLES="${PROJECT_SOURCE_DIR}/sim/examples")
  add_dependencies(monitor_sim_feed_tests railkit_profiler_plugin)
endif()
