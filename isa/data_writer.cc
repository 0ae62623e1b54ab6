#include "isa/data_writer.h"

#include <fmt/format.h>

#include "isa/disassembler.h"

namespace bpfdiff::isa {
namespace {

std::string HexLines(const std::vector<uint8_t>& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    out += fmt::format("{:02x}", bytes[i]);
    out += (i + 1) % 16 == 0 || i + 1 == bytes.size() ? "\n" : " ";
  }
  return out;
}

}  // namespace

std::string FormatDataFile(const DataFile& file, std::string_view comment) {
  std::string out = "# SPDX-License-Identifier: MIT\n";
  size_t start = 0;
  while (start < comment.size()) {
    const size_t end = comment.find('\n', start);
    const std::string_view line = comment.substr(start, end == std::string_view::npos ? end : end - start);
    out += fmt::format("# {}\n", line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  for (const MapSpec& map : file.maps) {
    out += fmt::format("-- map {} {} key={} value={} entries={}\n", map.fd, MapTypeName(map.type),
                       map.key_size, map.value_size, map.max_entries);
    if (map.type == MapType::kProgArray) {
      std::string entries;
      for (int32_t program : map.programs) entries += fmt::format("{}{}", entries.empty() ? "" : " ", program);
      if (!entries.empty()) out += entries + "\n";
    } else if (!map.initial_values.empty()) {
      out += HexLines(map.initial_values);
    }
  }
  if (file.options.kptr_xchg_inline) out += "-- options\nkptr_xchg_inline\n";
  for (size_t p = 0; p < file.programs.size(); ++p) {
    out += p == 0 ? "-- asm\n" : fmt::format("-- asm {}\n", p);
    const uint32_t callback = p < file.exception_callbacks.size() ? file.exception_callbacks[p] : 0;
    const uint32_t labelled[] = {callback};
    out += Disassemble(file.programs[p], {.labels = true, .extra_labels = callback != 0 ? labelled
                                                                                        : std::span<const uint32_t>{}});
  }
  for (size_t p = 0; p < file.exception_callbacks.size(); ++p) {
    if (file.exception_callbacks[p] == 0) continue;
    out += p == 0 ? fmt::format("-- exception_callback L{}\n", file.exception_callbacks[p])
                  : fmt::format("-- exception_callback L{} {}\n", file.exception_callbacks[p], p);
  }
  if (!file.memory.empty()) out += "-- mem\n" + HexLines(file.memory);
  if (file.expected_error) {
    out += fmt::format("-- error\n{}\n", *file.expected_error);
  } else if (file.expected_result) {
    out += fmt::format("-- result\n0x{:x}\n", *file.expected_result);
  }
  if (file.expected_trace) {
    out += "-- trace\n";
    for (const auto& call : *file.expected_trace) {
      out += fmt::format("{}(0x{:x}, 0x{:x}, 0x{:x}, 0x{:x}, 0x{:x}) = 0x{:x}\n", call.id, call.args[0],
                         call.args[1], call.args[2], call.args[3], call.args[4], call.ret);
    }
  }
  return out;
}

}  // namespace bpfdiff::isa
