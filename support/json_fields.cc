#include "support/json_fields.h"

#include <cmath>
#include <cstdint>

#include "support/files.h"

namespace bpfdiff {
namespace {

const Json* Find(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Error Missing(std::string_view key, std::string_view where) {
  return Fail("{}: missing required field '{}'", where, key);
}

Error WrongType(std::string_view key, std::string_view want, std::string_view where) {
  return Fail("{}: field '{}' must be {}", where, key, want);
}

}  // namespace

Result<Json> ReadJsonFile(const std::filesystem::path& path) {
  auto text = ReadTextFile(path);
  if (!text) return text.error();
  Json json = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Fail("{}: not valid JSON", path.string());
  return json;
}

Result<std::optional<std::string>> OptionalString(const Json& object, std::string_view key,
                                                  std::string_view where) {
  const Json* value = Find(object, key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) return WrongType(key, "a string", where);
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::optional<double>> OptionalNumber(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = Find(object, key);
  if (value == nullptr) return std::optional<double>();
  if (!value->is_number()) return WrongType(key, "a number", where);
  return std::optional<double>(value->get<double>());
}

Result<std::optional<int64_t>> OptionalCount(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = Find(object, key);
  if (value == nullptr) return std::optional<int64_t>();
  if (!value->is_number_integer() || value->get<int64_t>() < 0) {
    return WrongType(key, "a non-negative integer", where);
  }
  return std::optional<int64_t>(value->get<int64_t>());
}

Result<std::optional<int64_t>> OptionalExitStatus(const Json& object, std::string_view key, std::string_view where) {
  auto number = OptionalNumber(object, key, where);
  if (!number) return number.error();
  if (!*number) return std::optional<int64_t>();
  const double value = **number;
  if (!(value >= INT32_MIN && value <= INT32_MAX) || value != std::trunc(value)) {
    return WrongType(key, "an integer exit status", where);
  }
  return std::optional<int64_t>(static_cast<int64_t>(value));
}

Result<std::string> RequiredString(const Json& object, std::string_view key, std::string_view where) {
  auto value = OptionalString(object, key, where);
  if (!value) return value.error();
  if (!*value) return Missing(key, where);
  return **value;
}

Result<double> RequiredNumber(const Json& object, std::string_view key, std::string_view where) {
  auto value = OptionalNumber(object, key, where);
  if (!value) return value.error();
  if (!*value) return Missing(key, where);
  return **value;
}

Result<int64_t> RequiredCount(const Json& object, std::string_view key, std::string_view where) {
  auto value = OptionalCount(object, key, where);
  if (!value) return value.error();
  if (!*value) return Missing(key, where);
  return **value;
}

Result<bool> RequiredBool(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = Find(object, key);
  if (value == nullptr) return Missing(key, where);
  if (!value->is_boolean()) return WrongType(key, "true or false", where);
  return value->get<bool>();
}

std::string DumpJson(const Json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) + "\n";
}

}  // namespace bpfdiff
