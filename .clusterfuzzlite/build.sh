#!/bin/bash -eu
# ClusterFuzzLite builds what OSS-Fuzz builds: the one build script.
exec bash -eux "$SRC/bpfdiff/ci/oss-fuzz/build.sh"
