#!/bin/sh
# A stand-in for numactl (tests of `railkit rdma-loopback`): drops the --options, runs the rest.
while [ "${1#--}" != "$1" ]; do shift; done
exec "$@"
