// Internal: NVRTC options as the words NVRTC takes. Each option string is split at whitespace, so
// that "-Xptxas -dlcm=cg" works as typed on a command line.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ptxrt::detail {

std::vector<std::string> split_option_words(const std::vector<std::string>& options);

// The caller's extra options, their include folders apart: nvcc searches every -I folder before
// the toolkit's, so that a header beside the kernel can stand in for a toolkit header of the same
// name, and NVRTC is given them in that order too.
struct ExtraOptions {
  std::vector<std::filesystem::path> include_paths;  // -I DIR, -IDIR, --include-path[=]DIR
  std::vector<std::string> others;                   // in their order
};
ExtraOptions split_extra_options(const std::vector<std::string>& options);

}  // namespace ptxrt::detail
