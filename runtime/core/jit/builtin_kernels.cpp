#include "ptxrt/core/builtin_kernels.hpp"

#include "jit/embedded_files.hpp"

namespace ptxrt {

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

}  // namespace ptxrt
