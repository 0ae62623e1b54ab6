# The fuzz targets of the parsers: inputs a user or a file hands bpfdiff
# (pack scripts, recursion schedules, the report's JSON and history, the
# plugin's stdin and arguments). Included by fuzz/targets/CMakeLists.txt.
#
# Each checks more than "no crash": round trips through the writer where
# there is one, messages that say something, and (through each .options'
# timeout over large inputs) no superlinear parse. The `.data` reader is
# asm_fuzzer's. These targets sit above the rooms they wire (report/ and
# cli/plugin/ too): tests/layering ranks fuzz/targets with bench.
bpfdiff_fuzz_target(pack_script_fuzzer SOURCES pack_script_fuzzer.cc LIBS bpfdiff_pack_tools)
bpfdiff_fuzz_target(schedule_fuzzer SOURCES schedule_fuzzer.cc LIBS bpfdiff_recursion)
bpfdiff_fuzz_target(report_json_fuzzer SOURCES report_json_fuzzer.cc LIBS bpfdiff_report)
bpfdiff_fuzz_target(history_fuzzer SOURCES history_fuzzer.cc LIBS bpfdiff_report)
bpfdiff_fuzz_target(plugin_fuzzer SOURCES plugin_fuzzer.cc LIBS bpfdiff_plugin_protocol)
