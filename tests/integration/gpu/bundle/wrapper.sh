#!/bin/sh
# The GPU bundle's @PROGRAM@: the binary with the shared libraries the bundle
# brings (make_bundle.sh), which a GPU node may lack. Only this process and
# its children see them; the agent's programs keep the node's own.
bundle=$(dirname "$(readlink -f "$0")")/../bundle
LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$bundle/bin/@PROGRAM@" "$@"
