// libFuzzer target: the disk-cache entry reader. A random file almost never passes the SHA-256
// checksum, so the input is taken as an entry's body and sealed with its checksum here: the
// fuzzer then reaches every field decoder. The raw bytes also go through the header reader that
// `ptxrt cache ls` uses, which checks no checksum, and the check that tells the cache's own files
// from others' before one is deleted. All report problems as text or a bool, never throw.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "jit/disk_cache_entry.hpp"
#include "jit/hash.hpp"
#include "ptxrt/core/image.hpp"

namespace {
const std::string fuzz_key(64, 'a');
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  std::string sealed(body);
  const std::array<std::uint8_t, 32> checksum = ptxrt::Sha256().update(body).digest();
  sealed.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());

  ptxrt::Image image;
  ptxrt::detail::decode_entry(sealed, fuzz_key, image);
  ptxrt::Image unsealed;
  ptxrt::detail::decode_entry(body, fuzz_key, unsealed);
  ptxrt::Image header;
  ptxrt::detail::decode_entry_header(body, header);
  ptxrt::detail::begins_like_entry(body.substr(0, ptxrt::detail::entry_signature_bytes));
  return 0;
}
