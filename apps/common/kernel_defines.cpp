#include "apps/common/kernel_defines.hpp"

#include <charconv>
#include <string>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"

namespace ptxrt::apps {

namespace {

bool has_manifest(const Manifest& manifest) {
  return !manifest.defines.empty() || !manifest.entries.empty();  // other lines need a define
}

}  // namespace

void check_declared(const Program& program, const std::vector<Define>& defines) {
  const Manifest& manifest = program.manifest();
  if (!has_manifest(manifest)) return;
  for (const Define& define : defines) {
    if (manifest.find_define(define.name)) continue;
    std::string declared;
    for (const ManifestDefine& known : manifest.defines)
      declared += (declared.empty() ? "" : ", ") + known.name;
    throw Error(ErrorKind::invalid_argument,
                "-D " + define.name + ": " + program.name() + " declares no such constant (" +
                    (declared.empty() ? "it takes none" : "it takes " + declared) + ")");
  }
}

std::vector<Define> resolve_defines(const Program& program, std::vector<Define> defines) {
  check_declared(program, defines);
  validate_defines(program.manifest(), defines);
  return defines;
}

CompileOptions compile_options(std::vector<Define> defines) {
  CompileOptions options;
  options.defines = std::move(defines);
  return options;
}

int define_int(const std::vector<Define>& defines, std::string_view name) {
  for (const Define& define : defines) {
    if (define.name != name) continue;
    int value = 0;
    const char* end = define.value.data() + define.value.size();
    const auto [stop, error] = std::from_chars(define.value.data(), end, value);
    if (error != std::errc() || stop != end)
      throw Error(ErrorKind::invalid_argument,
                  std::string(name) + "=" + define.value + " is not an integer");
    return value;
  }
  throw Error(ErrorKind::invalid_argument, "no value for " + std::string(name));
}

}  // namespace ptxrt::apps
