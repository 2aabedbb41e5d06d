# railkit::monitor_judge: the judge on generated windows (judge_gen.hpp), and `railkit monitor
# judge` for real on generated directories (judge_cli.py).
if(NOT RAILKIT_UNIT_TESTS OR NOT TARGET railkit::monitor_judge)
  return()
endif()

railkit_unit_tests(monitor_judge_tests "monitor." LIBS railkit::monitor_judge
  SOURCES judge_test.cpp judge_read_test.cpp)

railkit_case_script(judge_cli.py monitor.judge NO_BENCH LABELS cli TIMEOUT 120)
