# monitor/prometheus and monitor/grafana: the rules under promtool (check, test, a broken rule
# failing the tests), the dashboard's and the rules' metric names against what railkit exports
# (tests/monitor/metric_names.py), and a real Prometheus scraping `railkit monitor node` (integration
# set: it needs the railkit binary and starts services on private ports).
railkit_case_script(promtool_rules.py monitor.promtool NO_BENCH LABELS cli TIMEOUT 120)
railkit_case_script(dashboard_check.py monitor.dashboard NO_BENCH LABELS unit TIMEOUT 60 --names sources)
railkit_case_script(prometheus_scrape.py monitor.prometheus NO_BENCH LABELS monitor TIMEOUT 90)
