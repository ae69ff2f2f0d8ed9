#include "ptxrt/core/jit.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "driver/driver_api.hpp"
#include "jit/elapsed.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/core/target.hpp"
#include "support/single_flight.hpp"

namespace ptxrt {
namespace {

using detail::Clock;
using detail::milliseconds_since;

// A module is cached per (context, image key). The context's address identifies it: every cached
// module holds its context, so the address cannot be reused while the entry exists.
std::string module_key(const Context& context, std::string_view image_key) {
  char address[2 + 2 * sizeof(void*) + 1];
  std::snprintf(address, sizeof address, "%p", static_cast<void*>(context.handle()));
  std::string key(address);
  key += '/';
  key += image_key;
  return key;
}

// Everything a request names, cheaply: the program's identity (not its text), the options, and
// `requester` (the context of a module, the driver version of an image). Equal fingerprints
// always mean the same answer, because a Program's identity changes with its content.
std::string request_fingerprint(const Program& program, const CompileOptions& options,
                                std::string_view requester) {
  std::string fingerprint;
  fingerprint.reserve(128);
  fingerprint += std::to_string(program.identity());
  fingerprint += '|';
  fingerprint += requester;
  fingerprint += '|';
  fingerprint += options.target.arch;
  fingerprint += '|';
  fingerprint += std::to_string(static_cast<int>(options.target.format));
  fingerprint += options.lto ? "|lto" : "|";
  fingerprint += options.resource_usage ? (*options.resource_usage ? "|v1" : "|v0") : "|v";
  // Separators that cannot appear inside the parts (NUL) keep ("a","bc") apart from ("ab","c").
  auto append = [&fingerprint](char tag, std::string_view part) {
    fingerprint += '\0';
    fingerprint += tag;
    fingerprint += part;
  };
  for (const Define& define : options.defines) {
    append('D', define.name);
    append('=', define.value);
  }
  for (const auto& path : options.include_paths) append('I', path.native());
  for (const std::string& option : options.extra_options) append('X', option);
  for (const std::string& expression : options.name_expressions) append('N', expression);
  for (const std::string& option : options.link_options) append('L', option);
  return fingerprint;
}

std::string context_address(const Context& context) {
  return std::to_string(reinterpret_cast<std::uintptr_t>(context.handle()));
}

// Requests already answered, by fingerprint: the hot path, which neither hashes sources nor reads
// included files again. A hit takes a reader lock for one hash lookup.
template <class Value>
class AnsweredRequests {
 public:
  std::optional<Value> find(const std::string& fingerprint) {
    std::shared_lock lock(mutex_);
    auto found = entries_.find(fingerprint);
    if (found == entries_.end()) return std::nullopt;
    hits_.fetch_add(1, std::memory_order_relaxed);
    return found->second;
  }

  void remember(std::string fingerprint, Value value) {
    std::unique_lock lock(mutex_);
    entries_.try_emplace(std::move(fingerprint), std::move(value));
  }

  // Forgets the answers `predicate` selects and hands them to the caller, who releases them
  // outside the lock.
  template <class Predicate>
  std::vector<Value> erase_if(Predicate predicate) {
    std::vector<Value> dropped;
    std::unique_lock lock(mutex_);
    std::erase_if(entries_, [&](const auto& entry) {
      if (!predicate(entry.second)) return false;
      dropped.push_back(entry.second);
      return true;
    });
    return dropped;
  }

  std::uint64_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }

 private:
  std::shared_mutex mutex_;
  std::unordered_map<std::string, Value> entries_;
  std::atomic<std::uint64_t> hits_{0};
};

}  // namespace

struct Jit::State {
  explicit State(JitOptions options_) : options(std::move(options_)) {
    if (!options.cache_directory.empty())
      disk = std::make_unique<DiskCache>(options.cache_directory, options.cache_max_bytes);
  }
  // <cache>/pch while the disk cache is in use; none where the cache's folder was refused, which
  // refuses its pch/ folder too (said once).
  std::filesystem::path precompiled_header_directory() const {
    if (!options.precompiled_headers || !disk) return {};
    if (disk->usable()) return options.cache_directory / "pch";
    log::warn_once("pch off " + options.cache_directory.string(),
                   "precompiled headers are off: they are kept in the disk cache '" +
                       options.cache_directory.string() + "', which is not used");
    return {};
  }
  JitOptions options;
  std::unique_ptr<DiskCache> disk;
  SingleFlight<std::string, Image> images;
  AnsweredRequests<std::shared_ptr<const Image>> answered_images;
  SingleFlight<std::string, Module> modules;
  AnsweredRequests<Module> answered_modules;
  SingleFlight<std::string, Library> libraries;
  std::atomic<std::uint64_t> disk_hits{0};
  std::atomic<std::uint64_t> compiles{0};
};

Jit::Jit(JitOptions options) : state_(std::make_unique<State>(std::move(options))) {}
Jit::~Jit() = default;

Jit& Jit::shared() {
  static Jit jit;
  return jit;
}

std::shared_ptr<const Image> Jit::image(const Program& program, const CompileOptions& options,
                                        int driver_version) {
  std::string fingerprint =
      request_fingerprint(program, options, "driver " + std::to_string(driver_version));
  if (auto answered = state_->answered_images.find(fingerprint)) return std::move(*answered);
  std::shared_ptr<const Image> found = find_or_compile(program, options, driver_version).image;
  state_->answered_images.remember(std::move(fingerprint), found);
  return found;
}

PrecompiledImage Jit::precompile(const Program& program, const CompileOptions& options,
                                 int driver_version) {
  return find_or_compile(program, options, driver_version);
}

PrecompiledImage Jit::find_or_compile(const Program& program, const CompileOptions& options,
                                      int driver_version) {
  PrecompiledImage found{.key = cache_key(program, options, driver_version)};
  found.image = state_->images.get_or_create(found.key, [&]() -> Image {
    // PCH files live beside the disk cache; they never change what is compiled (nor its key).
    CompileOptions compile_options = options;
    if (compile_options.precompiled_header_directory.empty())
      compile_options.precompiled_header_directory = state_->precompiled_header_directory();
    auto compile_counted = [&] {
      Image compiled = compile(program, compile_options, driver_version);
      state_->compiles.fetch_add(1, std::memory_order_relaxed);
      found.compiled = true;
      return compiled;
    };
    if (!state_->disk) return compile_counted();
    const auto start = Clock::now();
    CachedImage cached = state_->disk->load_or_compile(found.key, compile_counted);
    if (!cached.compiled) {
      state_->disk_hits.fetch_add(1, std::memory_order_relaxed);
      if (log::enabled(log::Level::info))
        log::write(log::Level::info, "disk cache hit for " + describe_image(cached.image) + " (" +
                                         milliseconds_since(start) + ")");
    }
    return std::move(cached.image);
  });
  return found;
}

CompileOptions Jit::target_for(CompileOptions options, const Context& context) {
  if (options.target.arch.empty()) {
    const DeviceProperties& device = context.device().properties();
    options.target = select_target(device.cc_major, device.cc_minor, options.target.format);
    if (!options.target.note.empty()) log::warn_once(options.target.note, options.target.note);
  }
  return options;
}

Module Jit::module(const Program& program, const CompileOptions& requested,
                   const Context& context) {
  std::string fingerprint = request_fingerprint(program, requested, context_address(context));
  if (std::optional<Module> answered = state_->answered_modules.find(fingerprint)) {
    if (log::enabled(log::Level::debug))
      log::write(log::Level::debug, "memory cache hit for " + answered->label());
    return std::move(*answered);
  }
  Module module = load_module(program, requested, context);
  state_->answered_modules.remember(std::move(fingerprint), module);
  return module;
}

Module Jit::load_module(const Program& program, const CompileOptions& requested,
                        const Context& context) {
  const CompileOptions options = target_for(requested, context);
  const DeviceProperties& device = context.device().properties();
  // The driver's version only matters for PTX, which the driver itself compiles.
  const int driver_version =
      options.target.format == ImageFormat::ptx ? device.driver_version : 0;
  std::shared_ptr<const Image> compiled = image(program, options, driver_version);
  const auto loaded =
      state_->modules.get_or_create(module_key(context, compiled->key), [&]() -> Module {
        check_image_for_driver(*compiled, device.driver_version, device.cc_major,
                               device.cc_minor);
        const auto start = Clock::now();
        Module module = Module::load(context, *compiled, state_->options.load_options);
        if (log::enabled(log::Level::info))
          log::write(log::Level::info, "loaded " + module.label() + " on device " +
                                           std::to_string(device.ordinal) + " in " +
                                           milliseconds_since(start));
        return module;
      });
  return *loaded;
}

Kernel Jit::kernel(const Program& program, const CompileOptions& options, const Context& context,
                   std::string_view entry) {
  return module(program, options, context).kernel(entry);
}

Library Jit::library(const Program& program, const CompileOptions& options) {
  if (options.target.arch.empty())
    throw Error(ErrorKind::invalid_argument,
                "Jit::library needs a target arch for " + program.name() +
                    " (a library serves every device: name one, or use Jit::target_for)");
  // The driver's version only matters for PTX, which the driver itself compiles.
  const int driver_version =
      options.target.format == ImageFormat::ptx ? detail::driver().version : 0;
  std::shared_ptr<const Image> compiled = image(program, options, driver_version);
  const auto loaded = state_->libraries.get_or_create(compiled->key, [&]() -> Library {
    const auto start = Clock::now();
    Library library = Library::load(*compiled, state_->options.load_options);
    if (log::enabled(log::Level::info))
      log::write(log::Level::info,
                 "loaded library " + library.label() + " in " + milliseconds_since(start));
    return library;
  });
  return *loaded;
}

void Jit::forget(const Context& context) {
  const std::string prefix = module_key(context, "");
  state_->modules.erase_if(
      [&](const std::string& key) { return key.compare(0, prefix.size(), prefix) == 0; });
  for (const auto& library : state_->libraries.values()) library->forget(context);
  // Unloaded here, outside the answers' lock.
  const std::vector<Module> dropped = state_->answered_modules.erase_if(
      [&](const Module& module) { return module.context().handle() == context.handle(); });
}

DiskCache* Jit::disk_cache() noexcept { return state_->disk.get(); }

JitStats Jit::stats() const {
  JitStats stats;
  stats.image_memory_hits = state_->images.hits() + state_->answered_images.hits();
  stats.disk_hits = state_->disk_hits.load();
  stats.compiles = state_->compiles.load();
  stats.module_hits = state_->modules.hits() + state_->answered_modules.hits();
  stats.module_loads = state_->modules.misses();
  stats.library_hits = state_->libraries.hits();
  stats.library_loads = state_->libraries.misses();
  return stats;
}

}  // namespace ptxrt
