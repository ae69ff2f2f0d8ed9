// One fatbin from per-architecture images, with nvFatbin.
#include <nvFatbin.h>

#include "driver/toolkit_check.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt {
namespace {

// Owns an nvFatbinHandle.
class FatbinBuilder {
 public:
  FatbinBuilder() {
    // Compressed entries are what nvcc writes; the driver and cuobjdump read them.
    const char* options[] = {"-64", "-host=linux"};
    check(nvFatbinCreate(&handle_, options, std::size(options)), "nvFatbinCreate");
  }
  FatbinBuilder(const FatbinBuilder&) = delete;
  FatbinBuilder& operator=(const FatbinBuilder&) = delete;
  ~FatbinBuilder() { nvFatbinDestroy(&handle_); }

  void add(const Image& part, const std::string& name) {
    // nvFatbin wants the number of sm_XY/compute_XY ("90", "90a").
    const std::string number = part.arch.substr(part.arch.find('_') + 1);
    const std::string identifier = name + "." + part.arch;
    const std::string what = "adding the " + std::string(to_string(part.format)) + " of " +
                             part.name + " for " + part.arch + " to the fatbin " + name;
    switch (part.format) {
      case ImageFormat::cubin:
        check(nvFatbinAddCubin(handle_, part.data.data(), part.data.size(), number.c_str(),
                               identifier.c_str()),
              "nvFatbinAddCubin", what);
        return;
      case ImageFormat::ptx:
        // c_str(): PTX goes in with its terminating NUL, as nvFatbin asks.
        check(nvFatbinAddPTX(handle_, part.data.c_str(), part.data.size() + 1, number.c_str(),
                             identifier.c_str(), ""),
              "nvFatbinAddPTX", what);
        return;
      case ImageFormat::ltoir:
        check(nvFatbinAddLTOIR(handle_, part.data.data(), part.data.size(), number.c_str(),
                               identifier.c_str(), ""),
              "nvFatbinAddLTOIR", what);
        return;
      case ImageFormat::fatbin:
        throw Error(ErrorKind::invalid_argument,
                    "a fatbin cannot hold another fatbin (" + part.name + ", for " + name + ")");
    }
  }

  std::string bytes() const {
    std::size_t size = 0;
    check(nvFatbinSize(handle_, &size), "nvFatbinSize");
    std::string data(size, '\0');
    check(nvFatbinGet(handle_, data.data()), "nvFatbinGet");
    return data;
  }

 private:
  nvFatbinHandle handle_ = nullptr;
};

}  // namespace

Image make_fatbin(const std::vector<Image>& parts, std::string name) {
  if (parts.empty())
    throw Error(ErrorKind::invalid_argument, "a fatbin needs at least one image (" + name + ")");
  FatbinBuilder builder;
  Image fatbin;
  fatbin.format = ImageFormat::fatbin;
  for (const Image& part : parts) {
    builder.add(part, name);
    fatbin.arch += (fatbin.arch.empty() ? "" : ",") + part.arch;
    if (!part.compile_log.empty())
      fatbin.compile_log += "== " + part.arch + " ==\n" + part.compile_log + "\n";
    fatbin.options.insert(fatbin.options.end(), part.options.begin(), part.options.end());
  }
  fatbin.data = builder.bytes();
  fatbin.name = std::move(name);
  fatbin.defines = parts.front().defines;
  fatbin.lowered_names = parts.front().lowered_names;
  fatbin.nvrtc_version = parts.front().nvrtc_version;
  return fatbin;
}

}  // namespace ptxrt
