# The fuzz targets of the parsers below report/: pack scripts and recursion
# schedules. Included by fuzz/targets/CMakeLists.txt.
#
# The parsers' targets check more than "no crash": round trips through the
# writer where there is one, messages that say something, and (through each
# .options' timeout over large inputs) no superlinear parse. The `.data`
# reader is asm_fuzzer's. The targets of the parsers in the rooms above
# fuzz/ live in those rooms, so that no include runs up the layering:
# report/fuzz/ (the report's JSON readers, the history) and
# cli/plugin/fuzz/ (the plugin's stdin and arguments). Every target's
# binary, .options, .dict and corpus are still found in one place each:
# build/<preset>/fuzz/targets/, fuzz/targets/ and fuzz/corpus/.
bpfdiff_fuzz_target(pack_script_fuzzer SOURCES pack_script_fuzzer.cc LIBS bpfdiff_pack_tools)
bpfdiff_fuzz_target(schedule_fuzzer SOURCES schedule_fuzzer.cc LIBS bpfdiff_recursion)
