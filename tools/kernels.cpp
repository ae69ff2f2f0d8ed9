// `ptxrt kernels`: the kernels built into the library, each with the entry points and the
// compile-time constants its manifest declares.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/common/builtin_kernels.hpp"
#include "cli.hpp"

namespace ptxrt::cli {
namespace {

nlohmann::json to_json(const std::string& kernel, const Manifest& manifest) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ManifestEntry& entry : manifest.entries)
    entries.push_back({{"name", entry.name}, {"description", entry.description}});
  nlohmann::json defines = nlohmann::json::array();
  for (const ManifestDefine& define : manifest.defines)
    defines.push_back({{"name", define.name},
                       {"values", define.values},
                       {"default", define.default_value ? nlohmann::json(*define.default_value)
                                                        : nlohmann::json(nullptr)}});
  return {{"name", kernel}, {"file", manifest.file}, {"entries", entries}, {"defines", defines}};
}

void print_kernel(const std::string& kernel, const Manifest& manifest) {
  std::cout << kernel << " (" << manifest.file << ")\n";
  for (const ManifestEntry& entry : manifest.entries)
    std::cout << "  entry  " << entry.name << ": " << entry.description << '\n';
  for (const ManifestDefine& define : manifest.defines) {
    std::cout << "  define " << define.name << " in {";
    for (std::size_t i = 0; i < define.values.size(); ++i)
      std::cout << (i == 0 ? "" : ", ") << define.values[i];
    std::cout << "} " << (define.default_value ? "default " + *define.default_value : "required")
              << '\n';
  }
}

void list_kernels(bool json) {
  const std::vector<std::string> names = apps::builtin_kernel_names();
  nlohmann::json listed = nlohmann::json::array();
  for (const std::string& name : names) {
    const Program program = apps::builtin_program(name);
    if (json)
      listed.push_back(to_json(name, program.manifest()));
    else
      print_kernel(name, program.manifest());
  }
  if (json)
    print_json(std::cout, listed);
  else if (names.empty())
    std::cout << "no builtin kernels (ptx_src/ held none when ptxrt was built)\n";
}

}  // namespace

void add_kernels_commands(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* command = app.add_subcommand(
      "kernels", "The builtin kernels: entry points and tunable constants from their manifests");
  command->add_flag("--json", *json,
                    "print [{name, file, entries: [{name, description}], defines: [{name, "
                    "values, default (null when required)}]}]");
  command->callback([json] { list_kernels(*json); });
}

}  // namespace ptxrt::cli
