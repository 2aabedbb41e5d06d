# Stand-in plot script for the unit tests: behaves as plot_results.py does without matplotlib.
echo "plot_results.py: matplotlib is not installed (Debian package: python3-matplotlib)" >&2
exit 5
