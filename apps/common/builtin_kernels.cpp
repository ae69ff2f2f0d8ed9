#include "apps/common/builtin_kernels.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <span>

#include "ptxrt/core/error.hpp"
#include "support/embedded_files.hpp"

namespace ptxrt::detail {
// Generated from ptx_src/ by cmake/EmbedKernels.cmake.
std::span<const EmbeddedFile> embedded_kernel_files();
}  // namespace ptxrt::detail

namespace ptxrt::apps {

std::vector<std::string> builtin_kernel_names() {
  constexpr std::string_view extension = ".cu";
  std::vector<std::string> names;
  for (const detail::EmbeddedFile& file : detail::embedded_kernel_files())
    if (file.path.ends_with(extension))
      names.emplace_back(file.path.substr(0, file.path.size() - extension.size()));
  return names;
}

std::optional<std::string_view> builtin_file(std::string_view path) {
  for (const detail::EmbeddedFile& file : detail::embedded_kernel_files())
    if (file.path == path) return file.text();
  return std::nullopt;
}

std::vector<std::pair<std::string_view, std::string_view>> builtin_headers() {
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  for (const detail::EmbeddedFile& file : detail::embedded_kernel_files())
    if (file.path.ends_with(".cuh")) headers.emplace_back(file.path, file.text());
  return headers;
}

std::optional<Program> find_builtin_program(std::string_view name) {
  std::string file(name);
  if (!file.ends_with(".cu")) file += ".cu";
  // The embedded files never change, so every request for one gets a copy of one Program (one
  // identity): Jit's fingerprint tables then hold an entry per kernel, not one per request.
  static std::mutex mutex;
  static std::map<std::string, Program, std::less<>> programs;
  std::lock_guard lock(mutex);
  if (auto found = programs.find(file); found != programs.end()) return found->second;
  std::optional<std::string_view> source = builtin_file(file);
  if (!source) return std::nullopt;
  Program program = Program::from_string(std::string(*source), file);
  for (auto [path, text] : builtin_headers())
    program.add_header(std::string(path), std::string(text));
  programs.emplace(file, program);
  return program;
}

Program builtin_program(std::string_view name) {
  if (std::optional<Program> program = find_builtin_program(name)) return *std::move(program);
  std::string known;
  for (const std::string& kernel : builtin_kernel_names()) known += " " + kernel;
  throw Error(ErrorKind::not_found, "no builtin kernel '" + std::string(name) +
                                        "'; known:" + (known.empty() ? " (none)" : known));
}

}  // namespace ptxrt::apps
