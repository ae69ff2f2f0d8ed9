// `ptxrt cache`: the disk cache's location and entries, emptying it, and filling it ahead of time
// (on a build machine without a GPU) with the CUBINs a later run will look up.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "cli.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::cli {
namespace {

namespace fs = std::filesystem;

struct WarmArguments {
  std::vector<std::string> archs{"auto"};
  std::vector<std::string> kernels;
  std::vector<std::string> defines;
  bool all_values = false;
  unsigned jobs = default_compile_threads();
  std::string fatbin_directory;  // --fatbin-dir: also one fatbin per kernel and configuration
};

struct WarmJob {
  const Program* program = nullptr;
  std::vector<Define> defines;
  Target target;
  std::string key;        // filled by the warm
  bool compiled = false;  // false: found in the cache
};

fs::path cache_directory() {
  fs::path directory = DiskCache::default_directory();
  if (directory.empty())
    throw Error(ErrorKind::not_found,
                "no cache directory is known: set PTXRT_CACHE_DIR, XDG_CACHE_HOME or HOME");
  return directory;
}

// Throws instead of letting the cache run without disk: here the disk is the whole point.
void require_usable(const DiskCache* cache) {
  if (!cache || !cache->usable())
    throw Error(ErrorKind::io, "the disk cache " + cache_directory().string() +
                                   " is not usable (the warning above says why)");
}

std::string format_time(fs::file_time_type time, bool utc) {
  const std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::file_clock::to_sys(time));
  std::tm parts{};
  if (utc)
    gmtime_r(&seconds, &parts);
  else
    localtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S", &parts);
  return text;
}

std::string format_bytes(std::uintmax_t bytes) {
  std::ostringstream text;
  text.precision(1);
  if (bytes < 1024)
    text << bytes << " B";
  else if (bytes < 1024 * 1024)
    text << std::fixed << static_cast<double>(bytes) / 1024 << " KiB";
  else
    text << std::fixed << static_cast<double>(bytes) / (1024 * 1024) << " MiB";
  return text.str();
}

// The cache at `directory` when it exists: listing or clearing a cache creates none.
std::optional<DiskCache> existing_cache(const fs::path& directory) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(directory, error))) return std::nullopt;
  return std::optional<DiskCache>(std::in_place, directory);
}

void list_entries(bool json) {
  const fs::path directory = cache_directory();
  const std::optional<DiskCache> cache = existing_cache(directory);
  const std::vector<DiskCacheEntry> entries =
      cache ? cache->entries() : std::vector<DiskCacheEntry>{};
  const std::vector<DiskCacheDamage> damaged =
      cache ? cache->damaged() : std::vector<DiskCacheDamage>{};
  std::uintmax_t total = 0;
  for (const DiskCacheEntry& entry : entries) total += entry.size_bytes;
  if (json) {
    nlohmann::json listed = nlohmann::json::array();
    for (const DiskCacheEntry& entry : entries)
      listed.push_back({{"key", entry.key},
                        {"size_bytes", entry.size_bytes},
                        {"last_use", format_time(entry.last_use, true)},
                        {"name", entry.name},
                        {"arch", entry.arch}});
    nlohmann::json problems = nlohmann::json::array();
    for (const DiskCacheDamage& damage : damaged)
      problems.push_back({{"path", damage.path.string()}, {"problem", damage.problem}});
    print_json(std::cout, {{"directory", directory.string()},
                           {"count", entries.size()},
                           {"total_bytes", total},
                           {"entries", listed},
                           {"damaged", problems}});
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const DiskCacheEntry& entry : entries)
    rows.push_back({entry.key.substr(0, 16), format_bytes(entry.size_bytes),
                    format_time(entry.last_use, false), entry.name, entry.arch});
  if (!rows.empty()) print_table(std::cout, {"key", "size", "last use", "name", "arch"}, rows);
  std::cout << entries.size() << " entries, " << format_bytes(total) << " in " << directory.string()
            << '\n';
  if (damaged.empty()) return;
  std::cout << damaged.size() << (damaged.size() == 1 ? " damaged path" : " damaged paths")
            << ", skipped (the cache deletes only files it wrote):\n";
  for (const DiskCacheDamage& damage : damaged)
    std::cout << "  " << damage.path.string() << ": " << damage.problem << '\n';
}

void clear_entries() {
  const fs::path directory = cache_directory();
  std::optional<DiskCache> cache = existing_cache(directory);
  const DiskCacheCleared cleared = cache ? cache->clear() : DiskCacheCleared{};
  std::cout << "removed " << cleared.entries << " entries (" << format_bytes(cleared.bytes)
            << ") from " << directory.string() << '\n';
}

// The defaults (a required constant takes its first value), after the user's fixed defines;
// with `all_values`, also every other value of each constant, one at a time.
std::vector<std::vector<Define>> warm_configurations(const Manifest& manifest,
                                                     const std::vector<Define>& fixed,
                                                     bool all_values) {
  std::vector<Define> base = fixed;
  std::vector<const ManifestDefine*> free;
  for (const ManifestDefine& declared : manifest.defines) {
    bool given = std::any_of(fixed.begin(), fixed.end(),
                             [&](const Define& define) { return define.name == declared.name; });
    if (given || declared.values.empty()) continue;
    base.push_back({declared.name, declared.default_value.value_or(declared.values.front())});
    free.push_back(&declared);
  }
  std::vector<std::vector<Define>> configurations{base};
  if (!all_values) return configurations;
  for (const ManifestDefine* declared : free) {
    auto slot = std::find_if(base.begin(), base.end(),
                             [&](const Define& define) { return define.name == declared->name; });
    for (const std::string& value : declared->values) {
      if (value == slot->value) continue;
      configurations.push_back(base);
      configurations.back()[static_cast<std::size_t>(slot - base.begin())].value = value;
    }
  }
  return configurations;
}

std::vector<Program> warm_programs(const std::vector<std::string>& kernels) {
  std::vector<std::string> names = kernels.empty() ? apps::builtin_kernel_names() : kernels;
  if (names.empty())
    throw Error(ErrorKind::not_found,
                "no builtin kernels to warm (ptx_src/ held none at build time): name a file with "
                "--kernel");
  std::vector<Program> programs;
  for (const std::string& name : names) programs.push_back(load_program(name));
  return programs;
}

std::vector<Target> warm_targets(const std::vector<std::string>& archs) {
  std::vector<Target> targets;
  for (const std::string& arch : archs) {
    targets.push_back(choose_target(arch, ImageFormat::cubin));
    if (!targets.back().arch.starts_with("sm_"))
      throw Error(ErrorKind::invalid_argument,
                  "cache warm stores CUBINs, which need a real architecture (sm_XY), not " +
                      targets.back().arch);
  }
  return targets;
}

// One fatbin per kernel and configuration, of the CUBINs warmed for every arch, for shipping:
// DIR/<kernel>[.NAME=VALUE...].fatbin. `images` lines up with `jobs`.
void write_fatbins(const fs::path& directory, const std::vector<WarmJob>& jobs,
                   const std::vector<Image>& images) {
  std::map<std::string, std::vector<Image>> parts;
  for (std::size_t index = 0; index < jobs.size(); ++index) {
    std::string file = fs::path(jobs[index].program->name()).stem().string();
    for (const Define& define : jobs[index].defines) file += "." + define.name + "=" + define.value;
    parts[file + ".fatbin"].push_back(images[index]);
  }
  fs::create_directories(directory);
  for (const auto& [file, images_of_file] : parts) {
    const Image fatbin = make_fatbin(images_of_file, file);
    std::ofstream out(directory / file, std::ios::binary | std::ios::trunc);
    out.write(fatbin.data.data(), static_cast<std::streamsize>(fatbin.data.size()));
    out.close();
    if (!out) throw Error(ErrorKind::io, "cannot write " + (directory / file).string());
    std::cout << "wrote " << (directory / file).string() << " (" << fatbin.arch << ")\n";
  }
}

void warm(const WarmArguments& arguments) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Target> targets = warm_targets(arguments.archs);
  const std::vector<Program> programs = warm_programs(arguments.kernels);
  const std::vector<Define> user_defines = parse_defines(arguments.defines);
  for (const Program& program : programs) apps::check_declared(program, user_defines);
  std::vector<WarmJob> jobs;
  for (const Target& target : targets)
    for (const Program& program : programs)
      for (std::vector<Define>& defines :
           warm_configurations(program.manifest(), user_defines, arguments.all_values))
        jobs.push_back({&program, std::move(defines), target});

  // The JIT's own caches and keys, so that what is warmed here is what a run looks up.
  Jit jit(JitOptions{.cache_directory = cache_directory(), .precompiled_headers = false});
  require_usable(jit.disk_cache());
  // Kept only when they are written into fatbins as well.
  std::vector<Image> images(arguments.fatbin_directory.empty() ? 0 : jobs.size());
  run_parallel(jobs.size(), arguments.jobs, [&](std::size_t index) {
    WarmJob& job = jobs[index];
    const PrecompiledImage precompiled =
        jit.precompile(*job.program, {.defines = job.defines, .target = job.target});
    job.key = precompiled.key;
    job.compiled = precompiled.compiled;
    if (!images.empty()) images[index] = *precompiled.image;
  });
  require_usable(jit.disk_cache());
  if (!images.empty()) write_fatbins(arguments.fatbin_directory, jobs, images);

  std::vector<std::vector<std::string>> rows;
  std::size_t compiled = 0;
  for (const WarmJob& job : jobs) {
    compiled += job.compiled ? 1 : 0;
    rows.push_back({job.target.arch, job.program->name(), format_defines(job.defines),
                    job.key.substr(0, 16), job.compiled ? "compiled" : "cached"});
  }
  print_table(std::cout, {"arch", "kernel", "defines", "key", "status"}, rows);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::cout << jobs.size() << (jobs.size() == 1 ? " configuration: " : " configurations: ")
            << jobs.size() - compiled << " already cached, " << compiled << " compiled, in "
            << fixed(elapsed.count(), 2) << " s; cache " << cache_directory().string() << '\n';
}

void add_warm_command(CLI::App& cache) {
  auto arguments = std::make_shared<WarmArguments>();
  CLI::App* command = cache.add_subcommand(
      "warm",
      "Compile CUBINs ahead of time (no GPU needed) into the disk cache, under the keys the JIT "
      "looks up: every arch x kernel x configuration not already there");
  command
      ->add_option("--arch", arguments->archs,
                   "architectures: sm_80,sm_90,...; auto is device 0's (sm_90 without a GPU)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--kernel", arguments->kernels,
                      "a builtin kernel or a .cu file (default: every builtin); repeatable");
  add_define_option(*command, arguments->defines);
  command->add_flag("--all-values", arguments->all_values,
                    "also every declared value of each constant, the others at their defaults");
  command->add_option("-j,--jobs", arguments->jobs, "compiles run at once")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  command->add_option("--fatbin-dir", arguments->fatbin_directory,
                      "also write one fatbin per kernel and configuration into this folder, "
                      "holding the CUBIN of every --arch, for shipping");
  command->callback([arguments] { warm(*arguments); });
}

}  // namespace

void add_cache_commands(CLI::App& app) {
  CLI::App* cache = app.add_subcommand(
      "cache", "The disk cache of compiled images ($PTXRT_CACHE_DIR, else ~/.cache/ptxrt)");
  // Checked in the callback, not by require_subcommand(), so that an unknown one is named.
  cache->callback([cache] {
    if (cache->get_subcommands().empty())
      throw CLI::RequiredError("A cache command (path, ls, clear or warm)");
  });
  cache->add_subcommand("path", "Print the cache directory")->callback([] {
    std::cout << cache_directory().string() << '\n';
  });
  auto json = std::make_shared<bool>(false);
  CLI::App* list = cache->add_subcommand(
      "ls",
      "List the entries, most recently used first, and the paths in the cache that hold what it "
      "did not write");
  list->add_flag("--json", *json,
                 "print {directory, count, total_bytes, entries: [{key, size_bytes, last_use "
                 "(UTC, ISO 8601), name, arch}], damaged: [{path, problem}]}");
  list->callback([json] { list_entries(*json); });
  cache->add_subcommand("clear", "Delete every entry (only files the cache wrote)")
      ->callback(clear_entries);
  add_warm_command(*cache);
}

}  // namespace ptxrt::cli
