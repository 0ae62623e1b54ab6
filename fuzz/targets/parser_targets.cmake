# The fuzz targets of the parsers: inputs a user or a file hands bpfdiff
# (pack scripts, recursion schedules, the report's JSON and history, the
# plugin's stdin and arguments). Included by fuzz/targets/CMakeLists.txt.
